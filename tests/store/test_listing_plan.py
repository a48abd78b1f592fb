"""The session list's query plan does not depend on the planner's statistics (issue 36):
with those of a table it believes empty (never analysed, as after a bulk import before
autovacuum comes round), PostgreSQL still walks the timestamp index newest first and
stops at the page, instead of sorting or joining every event."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from sessions import store
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import BLOCK, EVENT_FIELDS, START, UNBLOCK
from sessions.readmodels.session_views import thresholds

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner"),
]


def record(session, seq, event_type, at, **fields):
    return EventRecord(
        session, seq, event_type, at, "alice", *(fields.get(name) for name in EVENT_FIELDS)
    )


@pytest.fixture
def history():
    """2,000 sessions of 10 events, then the table's statistics forgotten."""
    began = timezone.now() - timedelta(days=3)
    for n in range(2000):
        at = began + timedelta(seconds=n)
        events = [record(f"s{n}", 1, START, at, title="t")]
        for seq in range(2, 11):
            kind = BLOCK if seq % 2 == 0 else UNBLOCK
            events.append(record(f"s{n}", seq, kind, at, reason="r" if kind == BLOCK else None))
        with store.holding(f"s{n}"):
            store.insert_many(events)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM pg_statistic WHERE starelid = 'tower_event'::regclass")
        cursor.execute(
            "UPDATE pg_class SET reltuples = -1, relpages = 0 WHERE oid = 'tower_event'::regclass"
        )


def plan_nodes(plan):
    yield plan
    for child in plan.get("Plans", []):
        yield from plan_nodes(child)


def test_the_first_page_walks_the_timestamp_index_whatever_the_statistics(history):
    explained = []

    def explain_first(execute, sql, params, many, context):
        # The plan of the listing's own statement, in its own transaction, just before
        # it runs: what the planner chooses there and then.
        if "ORDER BY" in sql and not explained:
            raw = context["cursor"].cursor
            raw.execute("EXPLAIN (FORMAT JSON) " + sql, params)
            explained.append(raw.fetchone()[0])
        return execute(sql, params, many, context)

    with connection.execute_wrapper(explain_first):
        page = store.listing(store.SessionQuery(limit=51), timezone.now(), thresholds())
    assert len(page) == 51
    [plan] = explained
    plan = (plan if isinstance(plan, list) else json.loads(plan))[0]
    nodes = list(plan_nodes(plan["Plan"]))
    assert nodes[0]["Node Type"] == "Limit"
    walk = nodes[1]
    assert (walk["Node Type"], walk.get("Index Name"), walk.get("Scan Direction")) == (
        "Index Scan",
        "tower_event_timestamp_id",
        "Backward",
    )
    assert not any(node["Node Type"] in ("Sort", "Seq Scan", "Hash Join") for node in nodes)
