"""A plan's node sessions' usage totals, kept per process by the safe position they were
read up to: a later view reads only the sessions that reported since, and sees every
report, those above the position included."""

import pytest
from django.db import transaction

from sessions import store
from sessions.domain.vocabulary import PLAN_CREATE, START, TOKEN_FIELDS, USAGE
from sessions.readmodels import open_sessions, plan_views
from sessions.readmodels import spend as spend_model
from sessions.rules.append import append_event
from sessions.store import spend as spend_rows

pytestmark = pytest.mark.django_db(transaction=True)

NODES = [{"key": "a", "title": "A"}, {"key": "b", "title": "B"}]


def spent(session, user, output_tokens):
    counts = dict.fromkeys(TOKEN_FIELDS, 0) | {"output_tokens": output_tokens}
    append_event(session, USAGE, {"model": "claude-sonnet-4-5", **counts}, user=user)


@pytest.fixture
def plan(alice):
    append_event("p", PLAN_CREATE, {"title": "P", "nodes": NODES}, user=alice)
    for session, node in (("a1", "a"), ("b1", "b")):
        append_event(session, START, {"title": session, "plan": "p", "node": node}, user=alice)
    spent("a1", alice, 1_000_000)  # $15
    open_sessions.safe_position()  # caught up: these are at or below the watermark


def node_costs():
    return {
        node.key: node.usage and float(node.usage.cost_usd)
        for node in plan_views.plan_view("p").nodes
    }


def counted(monkeypatch):
    calls = []
    real = spend_rows.usage_totals

    def counting(sessions, at=None):
        calls.append(sorted(sessions))
        return real(sessions, at)

    monkeypatch.setattr(spend_rows, "usage_totals", counting)
    return calls


def test_a_view_read_again_reads_no_sessions_totals_when_none_reported(plan, monkeypatch):
    assert node_costs() == {"a": 15.0, "b": None}
    calls = counted(monkeypatch)
    assert node_costs() == {"a": 15.0, "b": None}
    assert calls == []


def test_a_later_view_reads_only_the_sessions_that_reported_since(plan, alice, monkeypatch):
    node_costs()
    spent("b1", alice, 2_000_000)  # $30
    calls = counted(monkeypatch)
    assert node_costs() == {"a": 15.0, "b": 30.0}
    assert calls and all(sessions == ["b1"] for sessions in calls)


def test_a_report_above_the_kept_position_is_seen(plan, alice):
    node_costs()
    with transaction.atomic():  # the watermark cannot move here: the report is above it
        spent("a1", alice, 3_000_000)
        assert node_costs() == {"a": 45.0, "b": None}
    assert node_costs() == {"a": 45.0, "b": None}


def test_the_kept_usage_agrees_with_a_fresh_read(plan, alice):
    node_costs()
    spent("b1", alice, 5)
    spent("a1", alice, 2_000_000)
    open_sessions.safe_position()
    on_nodes = store.node_sessions("p")
    fresh = spend_model.rolled_up(spend_rows.usage_totals(["a1", "b1"]), {"a1": "a", "b1": "b"})
    assert spend_model.plan_usages("p", on_nodes) == fresh
