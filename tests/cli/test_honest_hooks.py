"""What the hooks say is true (docs/rules.md, "Liveness" and "Messages"): a person's Close
stops the running agent, naming who closed it and why; an agent that ends while it waits on
a person has not done its work (abandoned, not done); a paused agent may still wait for the
person."""

import pytest

from sessions.domain.vocabulary import BLOCK, CLOSE, UNBLOCK
from sessions.models import Event
from sessions.rules.append import append_event
from tests.cli.conftest import SESSION
from tests.cli.test_budget_pause import on_budgeted_node, spend

pytestmark = pytest.mark.django_db(transaction=True)


def close_of(session=SESSION):
    close = Event.objects.get(session=session, type=CLOSE)
    return close.outcome, close.note


def test_a_persons_close_refuses_the_next_tool_call_naming_them(hook, alice):
    hook("SessionStart")
    append_event(
        SESSION, CLOSE, {"outcome": "abandoned", "note": "wrong approach, stop"}, user=alice
    )
    said = hook("PreToolUse", tool_name="Bash", tool_input={"command": "ls"})["hookSpecificOutput"]
    assert said["permissionDecision"] == "deny"
    assert "closed by alice: wrong approach, stop" in said["permissionDecisionReason"]
    again = hook("PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    assert again["hookSpecificOutput"]["permissionDecision"] == "deny"  # every call after


def test_an_agent_that_ends_waiting_on_a_person_is_abandoned(hook, alice):
    hook("SessionStart")
    append_event(SESSION, BLOCK, {"reason": "Which database?"}, user=alice)
    hook("SessionEnd", reason="other")
    assert close_of() == ("abandoned", "ended while blocked: Which database?")


def test_an_agent_that_ends_after_its_turn_is_done(hook):
    hook("SessionStart")
    hook("Stop")
    hook("SessionEnd", reason="prompt_input_exit")
    assert close_of() == ("done", "ended: the person left Claude Code")


def test_an_agent_that_ends_paused_on_its_budget_is_abandoned(hook, env, alice):
    on_budgeted_node(hook, env, alice)
    spend(alice, 1)
    hook("PreToolUse", tool_name="Bash", tool_input={"command": "ls"})  # paused
    hook("SessionEnd", reason="other")
    outcome, note = close_of()
    assert outcome == "abandoned" and note.startswith("ended while blocked: budget spent")


@pytest.mark.parametrize("command", ["ct wait --until unblocked", "ct show"])
def test_a_paused_agent_may_still_wait_for_the_person(hook, env, alice, command):
    on_budgeted_node(hook, env, alice)
    spend(alice, 1)
    assert hook("PreToolUse", tool_name="Bash", tool_input={"command": command}) is None


@pytest.mark.parametrize("command", ["ct wait --until unblocked; rm -rf x", "ct waiting", "ls"])
def test_a_paused_agent_runs_nothing_else(hook, env, alice, command):
    on_budgeted_node(hook, env, alice)
    spend(alice, 1)
    said = hook("PreToolUse", tool_name="Bash", tool_input={"command": command})
    assert said["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_persons_unblock_reaches_the_agent_once_naming_who_answered(hook, alice):
    hook("SessionStart")
    hook("Notification", message="Claude needs your permission to use Bash")  # blocked
    append_event(SESSION, UNBLOCK, {"note": "yes, run the migration"}, user=alice)
    said = hook("PreToolUse", tool_name="Bash", tool_input={"command": "ls"})["hookSpecificOutput"]
    assert (
        said["permissionDecisionReason"] == "Control Tower: alice answered: yes, run the migration"
    )
    assert hook("PreToolUse", tool_name="Bash", tool_input={"command": "ls"}) is None  # once


def test_an_unblock_the_hooks_sent_is_not_handed_back(hook):
    hook("SessionStart")
    hook("Stop")  # blocked: waiting for the next prompt
    hook("UserPromptSubmit", prompt="Now the docs")  # the hooks unblock it themselves
    assert hook("PreToolUse", tool_name="Bash", tool_input={"command": "ls"}) is None
