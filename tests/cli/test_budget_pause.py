"""The hooks pause an agent whose node's budget is spent (docs/rules.md, "Spend"): at its next
PreToolUse the session is blocked with `budget spent: $X of $Y (node K)` and the tool
call refused, telling the agent to wait; a person raises the budget and unblocks, and the
agent goes on. Real hook processes against a live server."""

import pytest

from sessions.domain.vocabulary import PLAN_AMEND, PLAN_CREATE, PROGRESS, UNBLOCK, USAGE
from sessions.models import Event
from sessions.rules.append import append_event
from tests.cli.conftest import SESSION

pytestmark = pytest.mark.django_db(transaction=True)

HAIKU = "claude-haiku-4-5"  # $1 a million input tokens


def on_budgeted_node(hook, env, alice, node_budget=1, plan_budget=None):
    nodes = [{"key": "a", "title": "A", "budget_usd": node_budget}]
    fields = {"title": "R", "nodes": nodes}
    if plan_budget is not None:
        fields["budget_usd"] = plan_budget
    append_event("rel", PLAN_CREATE, fields, user=alice)
    hook("SessionStart", environment={**env, "CT_PLAN": "rel", "CT_NODE": "a"})


def spend(alice, dollars):
    counts = {"input_tokens": dollars * 1_000_000, "output_tokens": 0}
    zero = {"cache_read_tokens": 0, "cache_write_tokens": 0}
    append_event(SESSION, USAGE, {"model": HAIKU, **counts, **zero}, user=alice)


def blocks():
    return list(
        Event.objects.filter(session=SESSION, type="session_block").values_list("reason", flat=True)
    )


def test_a_spent_budget_refuses_the_next_tool_call_and_says_why(hook, env, alice):
    on_budgeted_node(hook, env, alice)
    spend(alice, 1)
    said = hook("PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    decision = said["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert "budget spent: $1.00 of $1.00 (node a)" in decision["permissionDecisionReason"]
    assert "wait" in decision["permissionDecisionReason"]


def test_a_spent_budget_blocks_the_session_with_the_reason_once(hook, env, alice):
    on_budgeted_node(hook, env, alice)
    spend(alice, 2)
    hook("PreToolUse")
    hook("PreToolUse")
    assert blocks() == ["budget spent: $2.00 of $1.00 (node a)"]


def test_a_spent_plan_budget_names_the_plan(hook, env, alice):
    on_budgeted_node(hook, env, alice, node_budget=100, plan_budget=1)
    spend(alice, 1)
    hook("PreToolUse")
    assert blocks() == ["budget spent: $1.00 of $1.00 (plan rel)"]


def test_within_budget_the_tool_runs(hook, env, alice):
    on_budgeted_node(hook, env, alice, node_budget=5)
    spend(alice, 1)
    assert hook("PreToolUse") is None
    assert blocks() == []


def test_once_a_person_raises_the_budget_and_unblocks_the_agent_goes_on(hook, env, alice):
    on_budgeted_node(hook, env, alice)
    spend(alice, 1)
    hook("PreToolUse")
    append_event("rel", PLAN_AMEND, {"budgets": {"a": 5}}, user=alice)
    append_event(SESSION, UNBLOCK, {"note": "budget raised to $5"}, user=alice)
    said = hook("PreToolUse")["hookSpecificOutput"]["permissionDecisionReason"]
    assert said == "Control Tower: alice answered: budget raised to $5"  # once
    assert hook("PreToolUse") is None
    assert blocks() == ["budget spent: $1.00 of $1.00 (node a)"]


def test_unblocked_without_a_raise_the_agent_is_paused_again(hook, env, alice):
    on_budgeted_node(hook, env, alice)
    spend(alice, 1)
    hook("PreToolUse")
    append_event(SESSION, UNBLOCK, {"note": "go on"}, user=alice)
    said = hook("PreToolUse")
    assert said["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert len(blocks()) == 2


def test_once_it_goes_on_its_next_heartbeat_says_what_the_pause_refused(hook, env, alice):
    on_budgeted_node(hook, env, alice)
    spend(alice, 1)
    hook("PreToolUse", tool_name="Bash", tool_input={"command": "make deploy"})
    append_event("rel", PLAN_AMEND, {"budgets": {"a": 5}}, user=alice)
    append_event(SESSION, UNBLOCK, {"note": "budget raised to $5"}, user=alice)
    hook("PreToolUse")  # the answer handed over
    hook("PostToolUse", tool_name="Bash", tool_input={"command": "make"})
    notes = Event.objects.filter(session=SESSION, type=PROGRESS).values_list("note", flat=True)
    assert (
        "refused Bash: make deploy: budget spent: $1.00 of $1.00 (node a); then Bash: make" in notes
    )
