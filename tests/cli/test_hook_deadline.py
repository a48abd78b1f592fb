"""A hook's deadline covers the whole hook, its own work included (issue 52): a reserved
pattern that once made every other agent's write check run past a minute is decided at
once; a reservation check that would run past the deadline lets the write through; and
anything else that runs long is cut short, the agent let go on."""

import io
import json
import time

import pytest
from ct import claude_code, hook_engine, space

from sessions.domain.vocabulary import PLAN_CREATE, START
from sessions.rules.append import append_event
from tests.support.ct_tools import ct_env, hook_payload, run_hook
from tests.support.git_repo import checkout as new_checkout
from tests.support.git_repo import commit

SID = "5e6f7a8b-0000-4000-8000-00000000d1e5"
HOOK_DEADLINE_SECONDS = 2.0
# The red team's pattern: valid (35 characters), and exponential for a regular expression
# that turns each `*` into `[^/]*`.
HOSTILE = "**/" + "*?" * 16 + "*Z"


@pytest.mark.django_db(transaction=True)
def test_a_write_beside_a_hostile_reservation_is_checked_within_the_deadline(
    tmp_path, live_server, token, bob
):
    shop = new_checkout(tmp_path / "shop")
    commit(shop)
    nodes = [{"key": "n", "title": "N", "paths": [HOSTILE, "src/**"]}]
    append_event("p", PLAN_CREATE, {"title": "P", "repo": "acme/shop", "nodes": nodes}, user=bob)
    append_event("bobs", START, {"plan": "p", "node": "n"}, user=bob)
    env = {**ct_env(tmp_path / "home", live_server.url, token), "CT_RESERVATIONS": "deny"}
    assert run_hook(env, hook_payload("SessionStart", SID, shop)).returncode == 0
    target = shop / "a" / ("b" * 200) / ("c" * 250)
    write = hook_payload("PreToolUse", SID, shop, tool_name="Write")
    write["tool_input"] = {"file_path": str(target), "content": ""}
    began = time.monotonic()
    done = run_hook(env, write)
    took = time.monotonic() - began
    assert done.returncode == 0 and done.stdout.strip() == ""  # not held: the write runs
    assert took < HOOK_DEADLINE_SECONDS


ITEMS = [{"session": "bobs", "paths": ["src/**"], "owner": "bob", "node": "n", "plan": "p"}]


def test_the_reservation_check_finds_the_holders_before_its_deadline():
    found = space.holders(ITEMS, "src/a.py", "mine", time.monotonic() + 60)
    assert [item["session"] for item in found] == ["bobs"]


def test_a_reservation_check_past_its_deadline_says_it_does_not_know():
    assert space.holders(ITEMS, "src/a.py", "mine", time.monotonic() - 1) is None


def test_a_hook_that_runs_past_its_hard_stop_lets_the_agent_go_on(tmp_path, monkeypatch):
    monkeypatch.setenv("CT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("CT_TOKEN", "unused")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(hook_engine, "HARD_STOP_SECONDS", 0.2)

    def runs_for_ever(hook):
        while True:
            pass

    monkeypatch.setitem(claude_code.HANDLERS, "SessionStart", runs_for_ever)
    payload = hook_payload("SessionStart", SID, tmp_path)
    said = io.StringIO()
    assert claude_code.hook(io.StringIO(json.dumps(payload)), said) == 0
    assert said.getvalue() == ""
    log = (tmp_path / "state" / "control-tower" / "hook.log").read_text()
    assert "ran past its 0.2 s" in log
