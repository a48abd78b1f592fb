"""A session's view is read from a few of its events (`store.read_view_events`), so that
it costs the same at any stream length. The rule, in Python (`projections.view_events`),
is a specification: the view of those events equals the view of the whole stream (a
hypothesis property), the store's SQL picks exactly those events (checked on generated
streams), and an append works out the next ones from them (`view_events_after`)."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions import store
from sessions.domain import projections
from sessions.domain.projections import view_events, view_events_after
from sessions.domain.vocabulary import BLOCK, START
from sessions.rules.imports import import_stream
from tests.conftest import spans
from tests.support.streams import streams

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
SHOWN = 3


LEASE = timedelta(minutes=45)


def view(events, blocker_count=None, time_spent=None, message_count=None):
    return projections.session_view(
        "g", events, NOW, projections.Thresholds(), blocker_count, time_spent, message_count, LEASE
    )


@given(streams())
def test_the_view_of_the_chosen_events_is_the_view_of_the_whole_stream(events):
    chosen, blocker_count, message_count = view_events(events, projections.MAX_BLOCKERS_SHOWN)
    last = projections.last_transition(events)
    spent = projections.time_in_state_from(spans(events), last, NOW)
    assert view(chosen, blocker_count, spent, message_count) == view(events)


@given(streams())
def test_the_strip_line_of_the_chosen_events_is_that_of_the_whole_stream(events):
    chosen = view_events(events).events
    whole = projections.attention_line("s", events)
    assert projections.attention_line("s", chosen) == whole


@given(streams(max_events=40), st.integers(1, 4))
def test_an_append_works_out_the_next_view_events_from_the_last(events, shown):
    before = view_events(events[:-1], shown)
    assert view_events_after(before, events[-1], shown) == view_events(events, shown)


@pytest.mark.django_db
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(events=streams(max_events=40))
def test_the_store_reads_exactly_the_chosen_events(events):
    session_id = f"g{abs(hash(tuple(events))) % 10**12}"
    events = [e._replace(session=session_id) for e in events]
    if not store.read_stream(session_id):
        import_stream(session_id, events)
    assert store.read_view_events(session_id, SHOWN) == view_events(events, SHOWN)


@pytest.mark.django_db
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(events=streams(max_events=25), micros=st.integers(0, 999_999))
def test_the_store_sums_the_spans_between_events_exactly(events, micros):
    session_id = f"t{abs(hash((tuple(events), micros))) % 10**12}"
    shifted = timedelta(microseconds=micros)
    events = [
        e._replace(session=session_id, timestamp=e.timestamp + shifted * (e.seq % 2))
        for e in events
    ]
    events = [e for i, e in enumerate(events) if i == 0 or e.timestamp >= events[i - 1].timestamp]
    events = [e._replace(seq=n) for n, e in enumerate(events, start=1)]
    if not store.read_stream(session_id):
        import_stream(session_id, events)
    assert store.stream_spans(session_id)[0] == spans(events)


@pytest.mark.django_db
def test_no_session_has_no_view_events():
    assert store.read_view_events("nobody", SHOWN) == ([], 0, 0)


@pytest.mark.django_db
def test_a_long_stream_on_a_page_of_views_is_read_by_its_view_events(alice, monkeypatch):
    from sessions.readmodels import session_views
    from sessions.rules.append import append_event

    monkeypatch.setattr(session_views, "WHOLE_STREAM_LIMIT", 3)
    append_event("short", START, {"title": "short"}, user=alice)
    append_event("long", START, {"title": "long"}, user=alice)
    for number in range(4):
        append_event("long", BLOCK, {"reason": f"r{number}"}, user=alice)
    views = session_views.session_views(["short", "long", "missing"], NOW)
    assert sorted(views) == ["long", "short"]
    assert views["long"] == session_views.project("long", store.read_stream("long"), NOW)
    assert views["short"] == session_views.project("short", store.read_stream("short"), NOW)
