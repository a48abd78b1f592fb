"""The few events a session's `work` is read from (`store.work`) give the same `work` as
its whole stream, on either database: a property over random streams of reports."""

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions import store
from sessions.domain.work import place_since, work
from sessions.store import work as work_rows
from tests.domain.test_work import reports, stream

pytestmark = pytest.mark.django_db

_names = itertools.count()


def stored(given_reports) -> str:
    """A new session's stream of the reports, stored; its id."""
    session = f"w{next(_names)}"
    events = [event._replace(session=session) for event in stream(*given_reports)]
    with store.holding(session):
        store.insert_many(events)
    return session


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(reports, min_size=1, max_size=30))
def test_the_reports_read_give_the_work_of_the_whole_stream(given_reports):
    session = stored(given_reports)
    assert work(work_rows.work_events(session)) == work(store.read_stream(session))


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(reports, min_size=1, max_size=30))
def test_the_place_reports_read_give_the_whole_streams_place_since(given_reports):
    session = stored(given_reports)
    whole = place_since(store.read_stream(session))
    assert place_since(work_rows.place_events(session)) == whole
