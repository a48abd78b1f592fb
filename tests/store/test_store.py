"""The store's reading by position: what a read model or a feed consumer folds."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from sessions import store
from sessions.domain.vocabulary import BLOCK, START
from sessions.rules.append import append_event
from sessions.store import database

pytestmark = pytest.mark.django_db(transaction=True)


def safe_position():
    return store.SafePosition().advance()


def test_reading_after_a_position_gives_every_later_event_once_in_order(alice):
    for n in range(5):
        append_event(f"s{n}", START, {"title": "t"}, user=alice)
        append_event(f"s{n}", BLOCK, {"reason": "r"}, user=alice)
    seen, after = [], 0
    while batch := store.read_feed(after, 10**9, 3):
        seen += batch
        after = batch[-1][0]
    positions = [position for position, _ in seen]
    assert positions == sorted(set(positions)) and len(seen) == 10
    assert [(e.session, e.seq) for _, e in seen] == [
        (f"s{n}", seq) for n in range(5) for seq in (1, 2)
    ]


def test_reading_stops_at_the_position_asked(alice):
    append_event("a", START, {"title": "t"}, user=alice)
    append_event("b", START, {"title": "t"}, user=alice)
    first = store.read_feed(0, 10**9, 10)[0][0]
    assert [e.session for _, e in store.read_feed(0, first, 10)] == ["a"]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite: one writer at a time")
def test_on_sqlite_the_newest_position_is_safe(alice):
    append_event("a", START, {"title": "t"}, user=alice)
    assert safe_position() == store.read_feed(0, 10**9, 10)[-1][0]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's two ways to parse a moment")
@pytest.mark.parametrize("way", ["sqlite", "sqlite<3.38"])
def test_both_ways_of_reading_microseconds_on_sqlite_are_exact(way, alice):
    moments = [
        datetime(2026, 11, 30, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(2026, 11, 30, 0, 0, tzinfo=UTC),  # Django writes no fraction for zero
        datetime(1969, 12, 31, 23, 59, 59, 500_000, tzinfo=UTC),
    ]
    for n, moment in enumerate(moments):
        append_event(f"m{n}", START, {"title": "t"}, user=alice, now=moment)
    column = database.MICROSECONDS_SQL[way].format("timestamp")
    sql = f"SELECT {column} FROM tower_event ORDER BY session"
    with connection.cursor() as cursor:
        cursor.execute(sql.replace("%%", "%"))
        read = [value for (value,) in cursor.fetchall()]
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    assert read == [(moment - epoch) // timedelta(microseconds=1) for moment in moments]


@pytest.mark.parametrize("ids", [[], ["one"], ["one", "two.2", "missing"]])
def test_streams_read_by_a_list_of_ids_are_exactly_those_stored(ids, alice):
    for session_id in ("one", "two.2", "other"):
        append_event(session_id, START, {"title": "t"}, user=alice)
    found = store.read_streams(ids)
    assert sorted(found) == sorted(set(ids) - {"missing"})
    assert all(events[0].session == stream for stream, events in found.items())
