"""A worker's heartbeats (progress with neither a note nor paths) are most of a long
session's stream. The reads that look for the latest progress note or the touched paths
must find them by their partial indexes, never by walking the heartbeats: on SQLite,
which keeps no statistics, the index of events by type looked better and walked them all
(15 ms at 20,000 heartbeats, on every append). The work a read does is counted by the
database itself: SQLite's virtual-machine steps, PostgreSQL's event rows fetched in this
transaction."""

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from sessions import store
from sessions.domain import vocabulary
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import EVENT_FIELDS, PROGRESS, START
from sessions.store import plan_rows, space

pytestmark = pytest.mark.django_db

FEW, MANY = 20, 3000


def record(session: str, seq: int, event_type: str, **fields) -> EventRecord:
    at = timezone.now() - timedelta(hours=1) + timedelta(milliseconds=seq)
    return EventRecord(
        session, seq, event_type, at, "alice", *(fields.get(name) for name in EVENT_FIELDS)
    )


def stream_with_heartbeats(session: str, heartbeats: int) -> str:
    """A session with a noted progress that wrote a path, then `heartbeats` bare ones."""
    events = [
        record(session, 1, START, title="t"),
        record(session, 2, PROGRESS, note="halfway", paths=["src/app.py"]),
    ]
    events += [record(session, seq, PROGRESS) for seq in range(3, heartbeats + 3)]
    with store.holding(session):
        store.insert_many(events)
    return session


def work_of(read: Callable[[], object]) -> int:
    """How much the database worked for `read`."""
    if connection.vendor == "sqlite":
        steps = [0]

        def count() -> int:
            steps[0] += 1
            return 0

        connection.ensure_connection()
        connection.connection.set_progress_handler(count, 100)
        try:
            read()
        finally:
            connection.connection.set_progress_handler(None, 100)
        return steps[0]
    fetched = (
        "SELECT COALESCE(idx_tup_fetch, 0) + COALESCE(seq_tup_read, 0)"
        " FROM pg_stat_xact_user_tables WHERE relname = 'tower_event'"
    )
    with connection.cursor() as cursor:
        cursor.execute(fetched)
        before = cursor.fetchone()[0]
        read()
        cursor.execute(fetched)
        return cursor.fetchone()[0] - before


READS = {
    "view events": lambda session: store.read_view_events(session, vocabulary.MAX_BLOCKERS_SHOWN),
    "handoff": lambda session: plan_rows.handoffs_of([session]),
    "touched paths": lambda session: space.touched(session, 200),
}


@pytest.mark.parametrize("read", READS.values(), ids=READS.keys())
def test_a_read_of_a_session_walks_none_of_its_heartbeats(read):
    few = stream_with_heartbeats("few", FEW)
    many = stream_with_heartbeats("many", MANY)
    assert work_of(lambda: read(many)) <= 2 * work_of(lambda: read(few)) + 20


def test_the_reads_find_the_note_and_the_paths_behind_the_heartbeats():
    session = stream_with_heartbeats("many", MANY)
    assert plan_rows.handoffs_of([session])[session].progress == "halfway"
    assert space.touched(session, 200) == (["src/app.py"], 1)
    events = store.read_view_events(session, vocabulary.MAX_BLOCKERS_SHOWN).events
    assert [event.seq for event in events if event.note == "halfway"] == [2]
