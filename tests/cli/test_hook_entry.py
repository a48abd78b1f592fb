"""`ct hook AGENT` starts fast (bench/RESULTS.md §29): it imports that agent's adapter and
what it needs (Claude Code's handlers, which every agent shares), and no parser, no other
subcommand, no other agent's adapter."""

import json
import subprocess
import sys

import pytest
from ct.hook_modules import HOOK_MODULES

PROBE = """
import io, json, sys
from ct import entry
sys.argv = ["ct", "hook", sys.argv[1]]
sys.stdin = io.StringIO("{}")
entry.main()
print(json.dumps(sorted(name for name in sys.modules if name.startswith(("ct", "argparse")))))
"""


@pytest.mark.parametrize("agent", sorted(HOOK_MODULES))
def test_a_hook_imports_its_own_adapter_and_no_parser_nor_other_agents(agent, tmp_path):
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, agent], capture_output=True, text=True, env=env, timeout=30
    )
    assert done.returncode == 0, done.stderr
    imported = set(json.loads(done.stdout.splitlines()[-1]))
    # Claude Code's adapter holds the handlers every agent's shares.
    others = set(HOOK_MODULES.values()) - {HOOK_MODULES[agent], "ct.claude_code"}
    assert HOOK_MODULES[agent] in imported
    assert not imported & (others | {"argparse", "ct.main", "ct.dispatch"})
