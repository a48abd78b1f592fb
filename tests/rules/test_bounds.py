"""One request's cost and size are bounded whatever one stream holds (issue 9): the
timeline and event lists come a page at a time, blockers are summarised, a stream has
a cap, and a form that loses its database connection after appending still answers 2xx."""

import urllib.parse

import pytest
from django.urls import reverse

from sessions.domain import vocabulary
from sessions.domain.vocabulary import BLOCK, CLOSE, UNBLOCK
from sessions.models import Event
from sessions.rules.append import append_event
from sessions.rules.refusals import Conflict
from sessions.web.views import session as session_page_views
from tests.support.faults import lost_connection


@pytest.fixture
def small_pages(monkeypatch):
    monkeypatch.setattr(vocabulary, "MAX_EVENTS_PAGE", 3)
    monkeypatch.setattr(vocabulary, "TIMELINE_PAGE", 3)


def grow(session_id, user, blocks):
    for number in range(blocks):
        append_event(session_id, BLOCK, {"reason": f"blocker {number}"}, user=user)


def test_the_session_page_shows_one_page_of_the_timeline_with_a_link_to_earlier(
    alice_client, started, alice, small_pages
):
    grow(started, alice, 6)  # seqs 1–7
    page = alice_client.get(reverse("session", args=[started])).content.decode()
    assert (
        "blocker 5" in page and "blocker 3" in page and "blocker 2" not in page.split("Timeline")[1]
    )
    assert "?before=5" in page
    earlier = alice_client.get(reverse("session", args=[started]) + "?before=5").content.decode()
    assert "blocker 1" in earlier.split("Timeline")[1]


def test_a_view_lists_the_latest_blockers_and_counts_them_all(
    api, started, alice, token_for, monkeypatch
):
    monkeypatch.setattr("sessions.domain.projections.MAX_BLOCKERS_SHOWN", 2)
    grow(started, alice, 5)
    view = api("GET", f"/api/sessions/{started}", token=token_for(alice)).json()
    assert [b["reason"] for b in view["blockers"]] == ["blocker 3", "blocker 4"]
    assert view["blocker_count"] == 5


def test_the_card_says_how_many_blockers_are_not_shown(alice_client, started, alice, monkeypatch):
    monkeypatch.setattr("sessions.domain.projections.MAX_BLOCKERS_SHOWN", 2)
    grow(started, alice, 5)
    assert "and 5 open in all" in alice_client.get("/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_events_api_comes_a_page_at_a_time(api, started, alice, token_for):
    grow(started, alice, 6)
    token = token_for(alice)
    first = api("GET", f"/api/sessions/{started}/events?limit=3", token=token).json()
    assert [e["seq"] for e in first["items"]] == [1, 2, 3]
    assert first["next"].endswith("after=3")
    next_page = urllib.parse.urlsplit(first["next"])
    second = api("GET", f"{next_page.path}?{next_page.query}", token=token).json()
    assert [e["seq"] for e in second["items"]] == [4, 5, 6]


def test_a_stream_at_its_cap_refuses_more_events_but_a_close(started, alice, monkeypatch):
    monkeypatch.setattr(vocabulary, "MAX_STREAM_EVENTS", 3)
    grow(started, alice, 1)
    with pytest.raises(Conflict) as refused:
        append_event(started, UNBLOCK, {}, user=alice)
    assert refused.value.code == "stream_full"
    assert "start a new session" in refused.value.detail
    assert Event.objects.count() == 2


def test_a_full_session_can_still_be_closed(started, alice, monkeypatch):
    monkeypatch.setattr(vocabulary, "MAX_STREAM_EVENTS", 3)
    grow(started, alice, 1)
    closed = append_event(started, CLOSE, {"note": "too long: starting afresh"}, user=alice)
    assert closed.event.seq == 3
    with pytest.raises(Conflict) as refused:
        append_event(started, BLOCK, {"reason": "one more"}, user=alice)
    assert refused.value.code == "transition_not_allowed"


@pytest.mark.django_db(transaction=True)
def test_a_form_whose_connection_drops_after_the_append_answers_once_and_appends_once(
    alice_client, started, monkeypatch
):
    real = session_page_views.session_context
    calls = []

    def drop_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise lost_connection()
        return real(*args, **kwargs)

    monkeypatch.setattr(session_page_views, "session_context", drop_once)
    response = alice_client.post(
        reverse("act", args=[started, "block"]), {"reason": "r"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert list(Event.objects.values_list("type", flat=True)) == ["session_start", BLOCK]


@pytest.mark.parametrize("url", ["/", "/sessions/s1/", "/api/", "/accounts/login/"])
def test_head_is_answered_like_get(alice_client, started, url):
    assert alice_client.head(url).status_code == 200
