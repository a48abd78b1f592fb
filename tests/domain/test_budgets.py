"""Budgets (docs/rules.md, "Spend"): which budget binds a node, whether it is spent, since
when; budgets as plan events set, change and remove them; what makes a budget valid."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions.domain import budgets, jsonl, plans, spend
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import (
    PLAN_AMEND,
    PLAN_CREATE,
    REMOVED,
    TOKEN_FIELDS,
    USAGE,
    canonical_fields,
    field_errors,
)

T0 = datetime(2026, 12, 1, tzinfo=UTC)
PRICES = spend.price_table({"m": {"input": 1, "output": 0, "cache_read": 0, "cache_write": 0}})


def plan_event(seq, kind, at=T0, **fields):
    return EventRecord("p", seq, kind, at, "alice", **fields)


def graph(plan_budget=None, node_budget=None):
    node = {"key": "a", "title": "A"}
    if node_budget is not None:
        node["budget_usd"] = node_budget
    fields = {"title": "P", "nodes": [node, {"key": "b", "title": "B"}]}
    if plan_budget is not None:
        fields["budget_usd"] = plan_budget
    return plans.graph_of([plan_event(1, PLAN_CREATE, **fields)])


def binding(found, node_cost, plan_cost):
    return budgets.binding(found, "p", "a", Decimal(node_cost), Decimal(plan_cost))


# Which budget binds


def test_with_no_budget_nothing_binds():
    assert binding(graph(), 5, 5) is None


def test_the_nodes_own_budget_binds_while_neither_is_spent():
    found = binding(graph(plan_budget=100, node_budget=10), 1, 1)
    assert (found.scope, found.limit_usd, found.over) == ("node", 10, False)


def test_the_plans_budget_binds_a_node_without_one():
    found = binding(graph(plan_budget=100), 1, 1)
    assert (found.scope, found.owner, found.limit_usd) == ("plan", "p", 100)


def test_a_spent_node_budget_binds_before_a_spent_plan_budget():
    found = binding(graph(plan_budget=1, node_budget=1), 1, 1)
    assert (found.scope, found.over) == ("node", True)


def test_a_spent_plan_budget_binds_before_the_nodes_unspent_one():
    found = binding(graph(plan_budget=5, node_budget=10), 2, 5)
    assert (found.scope, found.over) == ("plan", True)


def test_reaching_the_budget_exactly_is_spending_it():
    assert binding(graph(node_budget=2.5), Decimal("2.5"), 0).over


def test_the_reason_gives_dollars_rounded_half_up_to_cents():
    found = binding(graph(node_budget=1), Decimal("1.005"), 0)
    assert found.reason() == "budget spent: $1.01 of $1.00 (node a)"


# Budgets as plan events set them


def test_an_amend_changes_a_nodes_budget_and_null_removes_it():
    found = graph(node_budget=1)
    found = plans.apply(found, plan_event(2, PLAN_AMEND, budgets={"a": 3, "b": 2}))
    assert (found.nodes["a"].budget_usd, found.nodes["b"].budget_usd) == (3, 2)
    found = plans.apply(found, plan_event(3, PLAN_AMEND, budgets={"a": None}))
    assert found.nodes["a"].budget_usd is None


def test_an_amend_removes_the_plans_budget_with_its_stored_form():
    removed = canonical_fields({"budget_usd": REMOVED})
    found = plans.apply(graph(plan_budget=7), plan_event(2, PLAN_AMEND, **removed))
    assert found.budget_usd is None


def test_a_budget_for_a_node_the_plan_does_not_have_is_refused():
    with pytest.raises(plans.GraphError, match="budgets"):
        plans.apply(graph(), plan_event(2, PLAN_AMEND, budgets={"zz": 1}))


def test_each_budget_remembers_the_event_that_set_it():
    later = T0 + timedelta(hours=1)
    found = plans.apply(graph(plan_budget=1), plan_event(2, PLAN_AMEND, later, budgets={"a": 1}))
    assert found.budget_set_at == {None: T0, "a": later}


def test_a_removed_plan_budget_is_written_back_as_null():
    event = plan_event(2, PLAN_AMEND, **canonical_fields({"budget_usd": REMOVED}))
    assert '"budget_usd":null' in jsonl.encode_event(event)


# What a budget may be


@pytest.mark.parametrize("value", [0, -1, 1.001, 10**6 + 0.01, True, "5", float("nan")])
def test_a_bad_budget_is_refused(value):
    assert "budget_usd" in field_errors(
        PLAN_CREATE, {"title": "P", "nodes": [], "budget_usd": value}
    )


@pytest.mark.parametrize("value", [0.01, 1, 2.5, 999_999.99, 10**6])
def test_a_good_budget_is_taken(value):
    assert field_errors(PLAN_AMEND, {"budget_usd": value}) == {}


def test_only_an_amend_may_remove_the_plans_budget():
    assert "budget_usd" in field_errors(
        PLAN_CREATE, {"title": "P", "nodes": [{"key": "a", "title": "A"}], "budget_usd": REMOVED}
    )
    assert field_errors(PLAN_AMEND, {"budget_usd": REMOVED}) == {}


# Since when a budget has been spent


def report(session, minute, tokens):
    counts = dict(zip(TOKEN_FIELDS, (tokens, 0, 0, 0), strict=True))
    return EventRecord(
        session, minute + 1, USAGE, T0 + timedelta(minutes=minute), "a", model="m", **counts
    )


def test_the_crossing_is_the_report_that_took_the_spend_to_the_limit():
    reports = [report("s1", 0, 400_000), report("s2", 1, 500_000), report("s1", 2, 600_000)]
    assert budgets.crossed_at(reports, PRICES, Decimal(1)) == T0 + timedelta(minutes=2)


def test_a_late_smaller_total_does_not_count_twice():
    reports = [report("s1", 0, 900_000), report("s1", 1, 100_000)]
    assert budgets.crossed_at(reports, PRICES, Decimal(1)) is None


@given(
    st.lists(
        st.tuples(st.sampled_from(["s1", "s2", "s3"]), st.integers(0, 2_000_000)),
        max_size=12,
    ),
    st.integers(1, 4),
)
def test_the_crossing_is_the_first_moment_the_rolled_up_cost_reaches_the_limit(steps, limit):
    reports = [report(session, minute, tokens) for minute, (session, tokens) in enumerate(steps)]
    expected = None
    for upto in range(1, len(reports) + 1):
        by_session: dict[str, list] = {}
        for event in reports[:upto]:
            by_session.setdefault(event.session, []).append(event)
        cost = sum(
            (spend.usage(events, PRICES).cost_usd for events in by_session.values()), Decimal(0)
        )
        if cost >= limit:
            expected = reports[upto - 1].timestamp
            break
    assert budgets.crossed_at(reports, PRICES, Decimal(limit)) == expected
