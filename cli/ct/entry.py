"""The `ct` command. A hook call (`ct hook AGENT`, run by the agent at every tool call)
imports only what that agent's hook needs: no parser, no other subcommand, no other
agent's adapter, so that it starts fast (bench/RESULTS.md §17, §29)."""

import importlib
import sys

from ct.hook_modules import HOOK_MODULES


def main() -> int:
    words = sys.argv[1:]
    if len(words) == 2 and words[0] == "hook" and words[1] in HOOK_MODULES:
        return importlib.import_module(HOOK_MODULES[words[1]]).hook(sys.stdin, sys.stdout)
    from ct.main import main as run

    return run()
