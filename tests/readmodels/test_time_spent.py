"""The time-spent read model: sums kept per stream and caught up by seq equal the sums
over the whole stream, and nothing read inside a transaction is kept."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from sessions import store
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import BLOCK, START, UNBLOCK
from sessions.readmodels import time_spent
from sessions.rules.append import append_event
from sessions.rules.imports import import_stream
from tests.conftest import spans

pytestmark = pytest.mark.django_db(transaction=True)

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def events(session_id, count, step_seconds=7, first_seq=1):
    found = []
    for seq in range(first_seq, first_seq + count):
        kind = START if seq == 1 else (BLOCK if seq % 2 == 0 else UNBLOCK)
        fields = {"title": "Long"} if kind == START else {}
        if kind == BLOCK:
            fields = {"reason": f"r{seq}"}
        at = T0 + timedelta(seconds=step_seconds * seq, microseconds=seq * 13)
        found.append(EventRecord(session_id, seq, kind, at, "bench", **fields))
    return found


def append_rows(records):
    """Later events of a stream, as an append would store them."""
    store.insert_many(records)


def test_sums_kept_then_caught_up_equal_the_whole_stream(alice):
    first = events("long", 9)
    import_stream("long", first)
    assert time_spent.spans("long", first[-1]) == spans(first)
    later = events("long", 6, first_seq=10)
    append_rows(later)
    assert time_spent.spans("long", later[-1]) == spans(first + later)
    assert time_spent.spans("long", later[-1]) == store.stream_spans("long")[0]


def test_sums_stop_at_the_last_event_the_caller_read(alice):
    stream = events("long", 9)
    import_stream("long", stream)
    assert time_spent.spans("long", stream[5]) == spans(stream[:6])
    assert time_spent.spans("long", stream[-1]) == spans(stream)


def test_a_stream_that_has_not_grown_costs_no_query(alice):
    stream = events("long", 9)
    import_stream("long", stream)
    time_spent.spans("long", stream[-1])
    with CaptureQueriesContext(connection) as captured:
        assert time_spent.spans("long", stream[-1]) == spans(stream)
    assert captured.captured_queries == []


def test_an_append_of_this_process_adds_its_span_without_a_query(alice):
    append_event("s", START, {"title": "A session"}, user=alice)
    first = store.read_stream("s")
    time_spent.spans("s", first[-1])
    append_event("s", BLOCK, {"reason": "waiting"}, user=alice)
    stream = store.read_stream("s")
    with CaptureQueriesContext(connection) as captured:
        assert time_spent.spans("s", stream[-1]) == spans(stream)
    assert captured.captured_queries == []


def test_the_store_sums_from_a_seq_on_and_says_where_it_reached(alice):
    stream = events("long", 8)
    import_stream("long", stream)
    assert store.stream_spans("long", 5) == (spans(stream[4:]), 8)
    assert store.stream_spans("long", 8) == ({}, 8)
    assert store.stream_spans("long", 2, 6) == (spans(stream[1:6]), 6)


def test_what_is_read_inside_a_rolled_back_transaction_is_not_kept(alice):
    first = events("long", 5)
    import_stream("long", first)
    with pytest.raises(RuntimeError), transaction.atomic():
        rolled_back = events("long", 3, step_seconds=1000, first_seq=6)
        append_rows(rolled_back)
        time_spent.spans("long", rolled_back[-1])
        raise RuntimeError("rolled back")
    # Other events take the rolled-back ones' seqs: their spans, not the rolled-back ones'.
    committed = events("long", 3, step_seconds=7, first_seq=6)
    append_rows(committed)
    assert time_spent.spans("long", committed[-1]) == spans(first + committed)


def test_a_dropped_stream_is_summed_again(alice, monkeypatch):
    monkeypatch.setattr(time_spent.SUMS, "bound", 1)
    streams = {name: events(name, 6, step_seconds=n + 1) for n, name in enumerate("abc")}
    for name, stream in streams.items():
        import_stream(name, stream)
    for name, stream in [*streams.items(), *streams.items()]:
        assert time_spent.spans(name, stream[-1]) == spans(stream)
