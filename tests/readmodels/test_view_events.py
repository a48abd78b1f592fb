"""The kept view events (`readmodels.view_events`): what this process's append left a
stream's view depending on, used again after one probe of the last event while no other
event followed; read again when one did; never kept from a transaction rolled back."""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from sessions import store
from sessions.domain.vocabulary import BLOCK, MAX_BLOCKERS_SHOWN, START, UNBLOCK
from sessions.readmodels import view_events
from sessions.rules.append import append_event

pytestmark = pytest.mark.django_db(transaction=True)


def read(stream):
    return store.read_view_events(stream, MAX_BLOCKERS_SHOWN)


@pytest.fixture
def blocked(alice):
    append_event("s", START, {"title": "S"}, user=alice)
    append_event("s", BLOCK, {"reason": "waiting"}, user=alice)


def test_an_append_leaves_its_streams_view_events_kept_and_exact(blocked):
    with CaptureQueriesContext(connection) as captured:
        found = view_events.view_events("s")
    assert found == read("s")
    [probe] = captured.captured_queries  # of the last event alone, not the view's branches
    assert "UNION" not in probe["sql"]


def test_an_event_this_process_did_not_keep_has_them_read_again(blocked, alice):
    last = store.read_stream("s")[-1]
    with transaction.atomic():  # an append that keeps nothing: another process's, say
        store.insert(last._replace(seq=3, type=UNBLOCK, reason=None))
    found = view_events.view_events("s")
    assert found == read("s") and found.events[-1].type == UNBLOCK


def test_what_a_rolled_back_append_left_is_not_kept(blocked, alice):
    with pytest.raises(RuntimeError), transaction.atomic():
        append_event("s", UNBLOCK, {"note": "rolled back"}, user=alice)
        raise RuntimeError("rolled back")
    last = store.read_stream("s")[-1]
    store.insert(last._replace(seq=3, type=UNBLOCK, reason=None, note="kept"))
    found = view_events.view_events("s")
    assert found == read("s") and found.events[-1].note == "kept"


def test_appends_one_after_another_keep_the_view_events_exact(blocked, alice):
    for n in range(12):
        event = (UNBLOCK, {}) if n % 2 else (BLOCK, {"reason": f"r{n}"})
        append_event("s", event[0], event[1], user=alice)
        assert view_events.view_events("s") == read("s")
