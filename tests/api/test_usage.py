"""`session_usage` over real HTTP (docs/rules.md, "Spend"): a session's usage in its view,
priced by the table in force; totals, not increments; activity, the status kept, allowed
after a close; bad input refused with its field named, nothing written."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from sessions.domain.vocabulary import CLOSE, START, USAGE
from sessions.rules.append import append_event
from tests.api.conftest import assert_error, count

pytestmark = pytest.mark.django_db(transaction=True)

SONNET = "claude-sonnet-4-5-20250929"  # $3 in, $15 out, $0.30 cache read, $3.75 write


def report(api, token, model=SONNET, session="s1", **counts):
    tokens = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0}
    body = {"type": USAGE, "model": model, **tokens, "cache_write_tokens": 0, **counts}
    return api("POST", f"/api/sessions/{session}/events", body, token=token)


def view(api, token, session="s1"):
    return api("GET", f"/api/sessions/{session}", token=token).json()


def test_a_report_lands_in_the_sessions_usage_with_its_cost(api, session_s1, alice_token):
    answer = report(api, alice_token, input_tokens=1_000_000, cache_read_tokens=2_000_000)
    assert answer.status == 201
    assert answer.json()["session"]["usage"] == {
        "tokens": {"input": 1_000_000, "output": 0, "cache_read": 2_000_000, "cache_write": 0},
        "cost_usd": 3.6,
        "unpriced": [],
        "by_model": {
            SONNET: {
                "input": 1_000_000,
                "output": 0,
                "cache_read": 2_000_000,
                "cache_write": 0,
                "cost_usd": 3.6,
            }
        },
    }


def test_reports_are_totals_so_a_repeat_or_a_late_one_changes_nothing(api, session_s1, alice_token):
    report(api, alice_token, output_tokens=2_000)
    report(api, alice_token, output_tokens=1_000)  # late
    report(api, alice_token, output_tokens=2_000)  # again
    found = view(api, alice_token)["usage"]
    assert (found["tokens"]["output"], found["cost_usd"]) == (2_000, 0.03)


def test_a_model_with_no_price_is_counted_and_listed_unpriced(api, session_s1, alice_token):
    report(api, alice_token, model="their-model", input_tokens=10)
    report(api, alice_token, output_tokens=1_000_000)
    found = view(api, alice_token)["usage"]
    assert (found["cost_usd"], found["unpriced"]) == (15.0, ["their-model"])
    assert found["by_model"]["their-model"]["cost_usd"] is None


def test_a_report_is_activity_and_keeps_the_status(api, session_s1, alice_token):
    before = view(api, alice_token)
    answer = report(api, alice_token, input_tokens=1).json()
    assert answer["session"]["status"] == before["status"]
    assert answer["session"]["last_activity"] == answer["event"]["timestamp"]


def test_usage_may_be_reported_after_the_close(api, session_s1, alice_token):
    api("POST", "/api/sessions/s1/events", {"type": "session_close"}, token=alice_token)
    assert report(api, alice_token, input_tokens=5).status == 201
    assert view(api, alice_token)["usage"]["tokens"]["input"] == 5


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"input_tokens": -1}, "input_tokens"),
        ({"output_tokens": 1.5}, "output_tokens"),
        ({"cache_read_tokens": True}, "cache_read_tokens"),
        ({"cache_write_tokens": 10**15 + 1}, "cache_write_tokens"),
        ({"model": ""}, "model"),
        ({"model": "x" * 101}, "model"),
    ],
)
def test_a_bad_count_or_model_is_refused_with_its_field_named(
    api, session_s1, alice_token, change, field
):
    before = count()
    answer = report(api, alice_token, **change)
    assert_error(answer, 400, "invalid")
    assert field in json.dumps(answer.json())
    assert count() == before


def test_a_report_missing_a_count_is_refused(api, session_s1, alice_token):
    body = {"type": USAGE, "model": SONNET, "input_tokens": 1, "output_tokens": 1}
    answer = api("POST", "/api/sessions/s1/events", body, token=alice_token)
    assert_error(answer, 400, "invalid")
    assert "cache_read_tokens" in json.dumps(answer.json())


# Roll-ups: a node over all its attempts, a plan over its nodes (retired included) -------


@pytest.fixture
def plan(api, alice_token):
    nodes = [{"key": "a", "title": "A"}, {"key": "b", "title": "B"}]
    body = {"id": "rel", "title": "Release", "nodes": nodes}
    assert api("POST", "/api/plans", body, token=alice_token).status == 201
    return "rel"


def on_node(api, token, session, node):
    body = {"id": session, "title": session, "plan": "rel", "node": node}
    assert api("POST", "/api/sessions", body, token=token).status == 201


def test_a_nodes_usage_sums_every_attempt_and_the_plans_its_nodes(api, alice_token, plan):
    on_node(api, alice_token, "a1", "a")
    report(api, alice_token, session="a1", output_tokens=1_000_000)  # $15
    api(
        "POST",
        "/api/sessions/a1/events",
        {"type": "session_close", "outcome": "failed"},
        token=alice_token,
    )
    on_node(api, alice_token, "a2", "a")
    report(api, alice_token, session="a2", input_tokens=1_000_000)  # $3
    on_node(api, alice_token, "b1", "b")
    report(api, alice_token, model="their-model", session="b1", input_tokens=7)
    found = api("GET", "/api/plans/rel", token=alice_token).json()
    by_node = {node["key"]: node["usage"] for node in found["nodes"]}
    assert by_node["a"]["cost_usd"] == 18.0
    assert by_node["a"]["tokens"]["input"] == 1_000_000
    assert (by_node["b"]["cost_usd"], by_node["b"]["unpriced"]) == (0, ["their-model"])
    assert found["usage"]["cost_usd"] == 18.0
    assert found["usage"]["unpriced"] == ["their-model"]


def test_a_retired_nodes_spend_still_counts_for_the_plan(api, alice_token, plan):
    on_node(api, alice_token, "b1", "b")
    report(api, alice_token, session="b1", output_tokens=1_000_000)
    api(
        "POST",
        "/api/sessions/b1/events",
        {"type": "session_close", "outcome": "abandoned"},
        token=alice_token,
    )
    amend = {"type": "plan_amend", "retire": ["b"]}
    assert api("POST", "/api/plans/rel/events", amend, token=alice_token).status == 201
    assert api("GET", "/api/plans/rel", token=alice_token).json()["usage"]["cost_usd"] == 15.0


def test_a_plan_with_nothing_reported_has_no_usage(api, alice_token, plan):
    found = api("GET", "/api/plans/rel", token=alice_token).json()
    assert found["usage"] is None and found["nodes"][0]["usage"] is None


# The metrics' spend ---------------------------------------------------------------------


def spent(session, user, moment, output_tokens):
    counts = {"input_tokens": 0, "output_tokens": output_tokens, "cache_read_tokens": 0}
    fields = {"model": SONNET, **counts, "cache_write_tokens": 0}
    append_event(session, USAGE, fields, user=user, now=moment)


def test_the_metrics_count_each_sessions_cost_on_the_day_of_its_latest_report(
    api, alice, bob, alice_token
):
    day = datetime(2026, 11, 2, 12, tzinfo=UTC)
    for session, user in (("a", alice), ("b", bob), ("late", alice)):
        append_event(session, START, {"title": session}, user=user, now=day - timedelta(days=1))
    spent("a", alice, day - timedelta(days=1), 1_000_000)  # $15, then more the next day
    spent("a", alice, day, 2_000_000)  # $30 in all, on the 2nd
    spent("b", bob, day + timedelta(days=1), 1_000_000)  # $15 on the 3rd
    spent("late", alice, day, 1_000_000)
    spent("late", alice, day + timedelta(days=9), 1_000_000)  # its latest is past the window
    window = "since=2026-11-01T00:00:00Z&until=2026-11-04T00:00:00Z"
    found = api("GET", f"/api/metrics?{window}", token=alice_token).json()["spend"]
    assert found == {
        "by_day": {"2026-11-02": 30.0, "2026-11-03": 15.0},
        "by_owner": {"alice": 30.0, "bob": 15.0},
        "by_agent": {"unnamed": 45.0},
    }


def test_the_metrics_split_the_spend_by_the_agent_that_started_each_session(
    api, alice, alice_token
):
    day = datetime(2026, 11, 2, 12, tzinfo=UTC)
    for session, agent in (("a", "codex 0.169.0"), ("b", "codex 0.170.0"), ("c", None)):
        started = {"title": session, **({"agent": agent} if agent else {})}
        append_event(session, START, started, user=alice, now=day)
        spent(session, alice, day, 1_000_000)  # $15 each
    window = "since=2026-11-01T00:00:00Z&until=2026-11-04T00:00:00Z"
    found = api("GET", f"/api/metrics?{window}", token=alice_token).json()["spend"]
    assert found["by_agent"] == {"codex": 30.0, "unnamed": 15.0}


def test_the_metrics_count_the_sessions_closed_per_agent_by_outcome(api, alice, alice_token):
    day = datetime(2026, 11, 2, 12, tzinfo=UTC)
    started = [("a", "codex 0.169.0"), ("b", "codex 0.170.0"), ("c", "gemini 0.61.0"), ("d", None)]
    for session, agent in started:
        body = {"title": session, **({"agent": agent} if agent else {})}
        append_event(session, START, body, user=alice, now=day)
    append_event("a", CLOSE, {}, user=alice, now=day)
    append_event("b", CLOSE, {"outcome": "failed", "note": "tests fail"}, user=alice, now=day)
    append_event("c", CLOSE, {}, user=alice, now=day)
    append_event("d", CLOSE, {}, user=alice, now=day + timedelta(days=5))  # after the window
    window = "since=2026-11-01T00:00:00Z&until=2026-11-04T00:00:00Z"
    found = api("GET", f"/api/metrics?{window}", token=alice_token).json()
    assert found["throughput_by_agent"] == {
        "codex": {"done": 1, "failed": 1},
        "gemini": {"done": 1},
    }
