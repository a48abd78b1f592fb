"""Budgets over real HTTP (docs/rules.md, "Spend"): `budget_usd` on plans and nodes, `budgets`
in an amend; a spent node or plan is not claimed, started or reclaimed (409
`budget_spent`); the session view's `budget` and the attention `over_budget`; bad
budgets refused with the field named, nothing written."""

import json

import pytest

from sessions.domain.vocabulary import USAGE
from tests.api.conftest import assert_error, count

pytestmark = pytest.mark.django_db(transaction=True)

HAIKU = "claude-haiku-4-5-20251001"  # $1 a million input tokens


def make_plan(api, token, plan_budget=None, **budgets):
    nodes = [
        {"key": "a", "title": "A", **({"budget_usd": budgets["a"]} if "a" in budgets else {})},
        {"key": "b", "title": "B"},
    ]
    body = {"id": "p", "title": "Budgeted", "nodes": nodes}
    if plan_budget is not None:
        body["budget_usd"] = plan_budget
    answer = api("POST", "/api/plans", body, token=token)
    assert answer.status == 201, answer.body
    return answer.json()


def start(api, token, node, session=None):
    body = {"plan": "p", "node": node, **({"id": session} if session else {})}
    return api("POST", "/api/sessions", body, token=token)


def spend(api, token, session, dollars):
    """A usage report that puts the session's cost at `dollars` (input tokens at $1/M)."""
    counts = {"input_tokens": round(dollars * 1_000_000), "output_tokens": 0}
    body = {"type": USAGE, "model": HAIKU, **counts, "cache_read_tokens": 0}
    answer = api(
        "POST", f"/api/sessions/{session}/events", {**body, "cache_write_tokens": 0}, token=token
    )
    assert answer.status == 201, answer.body
    return answer.json()["session"]


def spent_and_failed(api, token):
    """Node a, budget $1, spent it all in session s1, which failed: ready to retry."""
    make_plan(api, token, a=1)
    start(api, token, "a", "s1")
    spend(api, token, "s1", 1)
    failed = {"type": "session_close", "outcome": "failed"}
    assert api("POST", "/api/sessions/s1/events", failed, token=token).status == 201


def amend(api, token, **fields):
    return api("POST", "/api/plans/p/events", {"type": "plan_amend", **fields}, token=token)


def test_a_plan_and_its_nodes_carry_their_budgets(api, alice_token):
    plan = make_plan(api, alice_token, plan_budget=100, a=2.5)
    assert plan["budget_usd"] == 100
    assert [node["budget_usd"] for node in plan["nodes"]] == [2.5, None]


def test_the_session_view_names_the_nodes_own_budget_while_nothing_is_spent(api, alice_token):
    make_plan(api, alice_token, plan_budget=100, a=6)
    start(api, alice_token, "a", "s1")
    view = spend(api, alice_token, "s1", 3)
    assert view["budget"] == {"scope": "node", "limit_usd": 6.0, "spent_usd": 3.0, "over": False}
    assert view["attention"] is None


def test_a_spent_node_budget_binds_and_the_session_needs_a_person(api, alice_token):
    make_plan(api, alice_token, plan_budget=100, a=6)
    start(api, alice_token, "a", "s1")
    view = spend(api, alice_token, "s1", 6)
    assert view["budget"] == {"scope": "node", "limit_usd": 6.0, "spent_usd": 6.0, "over": True}
    assert view["attention"]["kind"] == "over_budget"


def test_the_plans_budget_binds_when_it_is_spent_and_the_nodes_is_not(api, alice_token):
    make_plan(api, alice_token, plan_budget=5, a=100)
    start(api, alice_token, "a", "s1")
    view = spend(api, alice_token, "s1", 5)
    assert view["budget"] == {"scope": "plan", "limit_usd": 5.0, "spent_usd": 5.0, "over": True}


def test_over_budget_comes_before_every_other_attention(api, alice_token):
    make_plan(api, alice_token, a=1)
    start(api, alice_token, "a", "s1")
    spend(api, alice_token, "s1", 1)
    blocked = {"type": "session_block", "reason": "waiting"}
    api("POST", "/api/sessions/s1/events", blocked, token=alice_token)
    view = api("GET", "/api/sessions/s1?blocked_after=0", token=alice_token).json()
    assert view["attention"]["kind"] == "over_budget"


def test_over_budget_since_is_the_report_that_reached_the_budget(api, alice_token):
    make_plan(api, alice_token, a=2)
    start(api, alice_token, "a", "s1")
    spend(api, alice_token, "s1", 1)
    crossing = spend(api, alice_token, "s1", 2)["last_event_at"]
    later = spend(api, alice_token, "s1", 3)
    assert later["attention"] == {"kind": "over_budget", "since": crossing}


def test_over_budget_since_is_the_amend_that_lowered_the_budget_below_the_spend(api, alice_token):
    make_plan(api, alice_token, a=10)
    start(api, alice_token, "a", "s1")
    spend(api, alice_token, "s1", 3)
    lowered = amend(api, alice_token, budgets={"a": 2}).json()["event"]["timestamp"]
    view = api("GET", "/api/sessions/s1", token=alice_token).json()
    assert view["attention"] == {"kind": "over_budget", "since": lowered}


def test_a_spent_node_is_not_started_by_name(api, alice_token):
    spent_and_failed(api, alice_token)
    before = count()
    answer = start(api, alice_token, "a", "s2")
    assert_error(answer, 409, "budget_spent")
    assert "budget spent: $1.00 of $1.00 (node a)" in answer.json()["detail"]
    assert count() == before


def test_a_claim_passes_over_a_spent_node(api, alice_token):
    spent_and_failed(api, alice_token)
    amend(api, alice_token, nodes=[{"key": "c", "title": "C"}])
    claimed = api("POST", "/api/plans/p/claim", {}, token=alice_token).json()
    assert claimed["node"] == "b"


def test_a_claim_that_passed_over_a_spent_node_and_found_nothing_says_budget_spent(
    api, alice_token
):
    make_plan(api, alice_token, plan_budget=1)
    start(api, alice_token, "a", "s1")
    spend(api, alice_token, "s1", 1)
    before = count()
    answer = api("POST", "/api/plans/p/claim", {}, token=alice_token)
    assert_error(answer, 409, "budget_spent")
    assert "(plan p)" in answer.json()["detail"]
    assert count() == before


def test_a_claim_with_nothing_ready_and_no_budget_spent_is_nothing_ready(api, alice_token):
    make_plan(api, alice_token, plan_budget=100)
    start(api, alice_token, "a", "s1")
    start(api, alice_token, "b", "s2")
    assert_error(api("POST", "/api/plans/p/claim", {}, token=alice_token), 409, "nothing_ready")


def test_a_spent_node_is_not_in_the_plans_claimable_list(api, alice_token):
    spent_and_failed(api, alice_token)
    plan = api("GET", "/api/plans/p", token=alice_token).json()
    assert plan["claimable"] == ["b"]


def test_raising_the_budget_lets_the_node_start_again(api, alice_token):
    spent_and_failed(api, alice_token)
    assert amend(api, alice_token, budgets={"a": 5}).status == 201
    assert start(api, alice_token, "a", "s2").status == 201


def test_an_amend_removes_the_plans_budget_with_null(api, alice_token):
    make_plan(api, alice_token, plan_budget=1)
    answer = amend(api, alice_token, budget_usd=None)
    assert answer.status == 201, answer.body
    assert answer.json()["event"]["budget_usd"] is None
    assert answer.json()["plan"]["budget_usd"] is None
    log = api("GET", "/api/plans/p/events.jsonl", token=alice_token).body.decode()
    assert '"budget_usd":null' in log.splitlines()[-1]


def test_an_amend_removes_a_nodes_budget_with_null(api, alice_token):
    make_plan(api, alice_token, a=1)
    plan = amend(api, alice_token, budgets={"a": None}).json()["plan"]
    assert plan["nodes"][0]["budget_usd"] is None


def test_a_budget_for_no_node_of_the_plan_is_refused(api, alice_token):
    make_plan(api, alice_token)
    before = count()
    answer = amend(api, alice_token, budgets={"zz": 3})
    assert_error(answer, 400, "invalid")
    assert "budgets" in json.dumps(answer.json())
    assert count() == before


@pytest.mark.parametrize("budget", [0, -1, 1.234, 1_000_000.01, True, "5"], ids=repr)
@pytest.mark.parametrize("where", ["plan", "node", "amend", "budgets"])
def test_a_bad_budget_is_refused_with_its_field_named_and_nothing_written(
    api, alice_token, where, budget
):
    if where in ("amend", "budgets"):
        make_plan(api, alice_token)
    before = count()
    if where == "plan":
        body = {
            "id": "q",
            "title": "Q",
            "nodes": [{"key": "a", "title": "A"}],
            "budget_usd": budget,
        }
        answer = api("POST", "/api/plans", body, token=alice_token)
    elif where == "node":
        nodes = [{"key": "a", "title": "A", "budget_usd": budget}]
        answer = api(
            "POST", "/api/plans", {"id": "q", "title": "Q", "nodes": nodes}, token=alice_token
        )
    elif where == "amend":
        answer = amend(api, alice_token, budget_usd=budget)
    else:
        answer = amend(api, alice_token, budgets={"a": budget})
    assert_error(answer, 400, "invalid")
    named = {"plan": "budget_usd", "node": "nodes", "amend": "budget_usd", "budgets": "budgets"}
    assert named[where] in json.dumps(answer.json())
    assert count() == before
