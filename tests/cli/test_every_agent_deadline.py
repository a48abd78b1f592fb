"""Every agent's hook before a tool call ends within 2 seconds whatever the network does
(a tower that dribbles its answer a byte at a time, or never answers), exits 0, refuses
nothing, and keeps what it could not send in the spool (docs/rules.md, "Every agent")."""

import json
import subprocess
import time

import pytest

from tests.support.bad_towers import BadTower
from tests.support.ct_tools import CT, ct_env

HOOK_DEADLINE_SECONDS = 2.0
# Each agent's start and before-a-tool events, and its shell tool.
EVENTS = {
    "claude-code": ("SessionStart", "PreToolUse", "Bash"),
    "codex": ("SessionStart", "PreToolUse", "Bash"),
    "gemini": ("SessionStart", "BeforeTool", "run_shell_command"),
    "opencode": ("session.created", "tool.execute.before", "bash"),
}


def run(env, agent, payload):
    began = time.monotonic()
    done = subprocess.run(
        [CT, "hook", agent], input=json.dumps(payload), env=env, capture_output=True, text=True
    )
    return done, time.monotonic() - began


@pytest.mark.parametrize("behaviour", ["dribbling", "silent"])
@pytest.mark.parametrize("agent", sorted(EVENTS))
def test_the_hook_before_a_tool_ends_within_its_deadline_against_a_bad_tower(
    tmp_path, agent, behaviour
):
    start, before, shell = EVENTS[agent]
    base = {"session_id": f"{agent}-deadline", "cwd": str(tmp_path)}
    with BadTower(behaviour) as tower:
        env = ct_env(tmp_path / "home", tower.url, "ct_token")
        run(env, agent, {**base, "hook_event_name": start})
        tool = {"tool_name": shell, "tool_input": {"command": "ls"}}
        done, took = run(env, agent, {**base, "hook_event_name": before, **tool})
    assert (done.returncode, done.stdout.strip()) == (0, "")  # let go on, nothing refused
    assert took < HOOK_DEADLINE_SECONDS
    spool = tmp_path / "home" / "state" / "control-tower" / "spool.jsonl"
    assert spool.exists() and spool.read_text().strip()  # its start is kept to send
