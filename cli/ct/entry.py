"""The `ct` command. A hook call (`ct hook claude-code`, run by the agent at every tool
call) imports only what a hook needs: no parser, no other subcommand, so that it starts
fast (bench/RESULTS.md §17)."""

import sys


def main() -> int:
    if sys.argv[1:] == ["hook", "claude-code"]:
        from ct.claude_code import hook

        return hook(sys.stdin, sys.stdout)
    from ct.main import main as run

    return run()
