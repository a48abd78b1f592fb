"""The read side agrees with the pure projections it stands in for."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from sessions import store
from sessions.domain import projections
from sessions.readmodels import board as board_model
from sessions.readmodels import session_views
from sessions.store import SessionQuery
from tests.conftest import CONFORMANCE, conformance_expected, projected_status

LOGS = sorted(conformance_expected()["sessions"])


@pytest.fixture
def conformance_sessions(db):
    call_command("import_jsonl", str(CONFORMANCE / "logs"), stdout=io.StringIO())


def test_board_rows_give_each_session_its_projected_status(conformance_sessions):
    rows = board_model.board_rows(None, None, timezone.now() - timedelta(days=3650))
    assert {session_id for session_id, *_ in rows} == set(LOGS)
    for row in rows:
        assert row.status == projected_status(row.session)
        events = store.read_stream(row.session)
        assert row.last_at == projections.last_activity(events)
        assert row.changed_at == projections.last_transition(events).timestamp


@pytest.mark.parametrize("status", ["active", "blocked", "in_review", "closed"])
def test_the_status_filter_agrees_with_the_projection(conformance_sessions, status):
    listed = set(board_model.listing(SessionQuery(status=status)))
    assert listed == {s for s in LOGS if projected_status(s) == status}


def test_the_session_view_of_an_unknown_session_is_none(db):
    assert session_views.session_view("nope") is None


def test_the_version_changes_exactly_when_an_event_is_appended(conformance_sessions, alice):
    from sessions.rules.append import append_event

    before = board_model.version()
    assert board_model.version() == before
    append_event("fresh", "session_start", {"title": "t"}, user=alice)
    assert board_model.version() > before


@pytest.mark.skipif(
    connection.vendor != "sqlite", reason="SQLite's planner, which keeps no statistics"
)
def test_the_board_reads_old_closes_by_neither_a_scan_nor_the_close_time(conformance_sessions):
    # The board's query finds sessions closed lately by close time, and the closes above
    # the open-sessions watermark by id: neither read may walk every close ever made.
    with CaptureQueriesContext(connection) as queries:
        board_model.board_rows(None, None, timezone.now() - timedelta(hours=24))
    (board_query,) = [q["sql"] for q in queries if "UNION" in q["sql"]]
    # Run as a prepared statement: planned here with its placeholders left unbound.
    board_query = board_query.replace("%s", "?")
    unbound = [None] * board_query.count("?")
    plan = [
        d for *_, d in connection.connection.execute(f"EXPLAIN QUERY PLAN {board_query}", unbound)
    ]
    assert not [step for step in plan if step.startswith("SCAN") and "tower_event" in step]
    assert any("tower_event_close_times (timestamp>?)" in step for step in plan), plan
    assert not any("(timestamp<?)" in step for step in plan), plan
