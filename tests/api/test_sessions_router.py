"""/api/sessions over real HTTP: starting, appending, reading and listing sessions, with
every error code each answers."""

import time
import urllib.parse
from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.domain.vocabulary import BLOCK, START
from sessions.models import Event
from sessions.rules.append import append_event
from tests.api.conftest import assert_error, count

pytestmark = pytest.mark.django_db(transaction=True)


# Starting sessions


def test_starting_a_session_returns_201_and_its_view(api, alice_token):
    response = api(
        "POST", "/api/sessions", {"id": "s1", "title": "Ship", "note": "go"}, token=alice_token
    )
    assert response.status == 201
    view = response.json()
    assert {k: view[k] for k in ("id", "title", "owner", "status", "next_action", "seq")} == {
        "id": "s1",
        "title": "Ship",
        "owner": "alice",
        "status": "active",
        "next_action": "go",
        "seq": 1,
    }
    assert view["opened_at"].endswith("Z") and view["closed_at"] is None


def test_a_session_started_without_an_id_gets_one(api, alice_token):
    view = api("POST", "/api/sessions", {"title": "Ship"}, token=alice_token).json()
    assert Event.objects.get().session == view["id"]


def test_starting_an_existing_id_is_409_with_the_current_view(api, session_s1, alice_token):
    response = api("POST", "/api/sessions", {"id": "s1", "title": "Again"}, token=alice_token)
    body = assert_error(response, 409, "session_exists")
    assert body["session"]["title"] == "Ship it"
    assert count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"title": ""},
        {"title": "x" * 201},
        {"title": "t", "id": "../etc"},
        {"title": "t", "extra": 1},
        {"title": 5},
        {"title": "t", "note": "nul\u0000"},
    ],
)
def test_an_invalid_start_is_400_and_writes_nothing(api, alice_token, body):
    assert_error(api("POST", "/api/sessions", body, token=alice_token), 400, "invalid")
    assert count() == 0


# Appending


def test_appending_returns_201_with_the_event_and_the_view(api, session_s1, alice_token):
    response = api(
        "POST",
        f"{session_s1}/events",
        {"type": "session_block", "reason": "keys"},
        token=alice_token,
    )
    assert response.status == 201
    body = response.json()
    assert list(body["event"]) == ["session", "seq", "type", "timestamp", "actor", "reason"]
    assert (body["event"]["seq"], body["session"]["status"]) == (2, "blocked")
    assert body["session"]["blockers"][0] == {
        "reason": "keys",
        "timestamp": body["event"]["timestamp"],
        "actor": "alice",
        "seq": 2,
    }


@pytest.mark.parametrize(
    "body",
    [
        {"type": "session_pause"},
        {"type": "session_block"},
        {"reason": "no type"},
        {"type": "session_block", "reason": "x" * 2001},
        {"type": "session_close", "reason": "close has no reason"},
        {"type": "session_close", "expected_seq": "one"},
        {"type": "session_close", "status": "closed"},
    ],
)
def test_an_invalid_event_is_400_and_writes_nothing(api, session_s1, alice_token, body):
    assert_error(api("POST", f"{session_s1}/events", body, token=alice_token), 400, "invalid")
    assert count() == 1


def test_a_transition_not_allowed_is_409_with_the_current_view(api, session_s1, alice_token):
    response = api("POST", f"{session_s1}/events", {"type": "session_unblock"}, token=alice_token)
    body = assert_error(response, 409, "transition_not_allowed")
    assert body["session"]["status"] == "active"
    assert count() == 1


def test_a_stale_expected_seq_is_409(api, session_s1, alice_token):
    body = {"type": "session_block", "reason": "r", "expected_seq": 0}
    assert_error(
        api("POST", f"{session_s1}/events", body, token=alice_token), 409, "stale_expected_seq"
    )
    assert count() == 1


def test_a_repeated_idempotency_key_answers_200_with_the_first_event(api, session_s1, alice_token):
    body, headers = {"type": "session_block", "reason": "r"}, {"Idempotency-Key": "retry-1"}
    first = api("POST", f"{session_s1}/events", body, token=alice_token, headers=headers)
    again = api("POST", f"{session_s1}/events", body, token=alice_token, headers=headers)
    assert (first.status, again.status) == (201, 200)
    assert first.json()["event"] == again.json()["event"]
    assert count() == 2


def test_appending_to_someone_elses_session_is_403(api, session_s1, bob_token):
    body = {"type": "session_block", "reason": "r"}
    assert_error(api("POST", f"{session_s1}/events", body, token=bob_token), 403, "forbidden")
    assert count() == 1


def test_appending_to_an_unknown_session_is_404(api, alice_token):
    body = {"type": "session_block", "reason": "r"}
    assert_error(
        api("POST", "/api/sessions/nope/events", body, token=alice_token), 404, "not_found"
    )


# Reading


def test_the_session_view_has_every_field(api, session_s1, alice_token):
    view = api("GET", session_s1, token=alice_token).json()
    assert list(view) == [
        "id",
        "title",
        "owner",
        "agent",
        "status",
        "stale",
        "blockers",
        "blocker_count",
        "next_action",
        "opened_at",
        "last_event_at",
        "closed_at",
        "seq",
        "plan",
        "node",
        "outcome",
        "time_in_state",
        "attention",
        "progress",
        "messages",
        "message_count",
        "last_activity",
        "work",
        "usage",
        "touched",
        "touched_count",
        "budget",
    ]


def test_stale_after_overrides_the_threshold(api, session_s1, alice_token):
    assert api("GET", session_s1, token=alice_token).json()["stale"] is False
    time.sleep(0.01)
    assert api("GET", f"{session_s1}?stale_after=0", token=alice_token).json()["stale"] is True


def test_a_bad_stale_after_is_400(api, session_s1, alice_token):
    assert_error(api("GET", f"{session_s1}?stale_after=soon", token=alice_token), 400, "invalid")


def test_an_unknown_session_is_404(api, alice_token):
    assert_error(api("GET", "/api/sessions/nope", token=alice_token), 404, "not_found")


def test_the_events_come_back_as_json_oldest_first(api, session_s1, alice, alice_token):
    append_event("s1", BLOCK, {"reason": "r"}, user=alice)
    body = api("GET", f"{session_s1}/events", token=alice_token).json()
    assert [e["seq"] for e in body["items"]] == [1, 2] and body["next"] is None


def test_the_events_of_an_unknown_session_are_404(api, alice_token):
    assert_error(api("GET", "/api/sessions/nope/events", token=alice_token), 404, "not_found")
    assert_error(api("GET", "/api/sessions/nope/events.jsonl", token=alice_token), 404, "not_found")


def test_the_jsonl_download_is_the_canonical_log(api, session_s1, alice_token):
    response = api("GET", f"{session_s1}/events.jsonl", token=alice_token)
    assert response.status == 200
    event = Event.objects.get()
    stamp = event.timestamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    expected = (
        '{"session":"s1","seq":1,"type":"session_start",'
        f'"timestamp":"{stamp}","actor":"alice","title":"Ship it"}}\n'
    )
    assert response.body == expected.encode()


@pytest.fixture
def several(alice, bob):
    append_event("a1", START, {"title": "Alpha"}, user=alice)
    append_event("b1", START, {"title": "Beta"}, user=bob)
    append_event("b1", BLOCK, {"reason": "r"}, user=bob)
    append_event("a2", START, {"title": "Gamma"}, user=alice)
    append_event("a2", "session_close", {}, user=alice)


def listed(api, token, query=""):
    response = api("GET", f"/api/sessions{query}", token=token)
    assert response.status == 200, response.body
    return response.json()


def test_the_list_is_newest_activity_first(api, alice_token, several):
    assert [v["id"] for v in listed(api, alice_token)["items"]] == ["a2", "b1", "a1"]


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        ("?status=blocked", ["b1"]),
        ("?status=closed", ["a2"]),
        ("?status=active", ["a1"]),
        ("?owner=alice", ["a2", "a1"]),
        ("?q=gam", ["a2"]),
        ("?q=B1", ["b1"]),
        ("?stale=true", []),
        ("?stale=true&stale_after=0", ["a1"]),
        ("?stale=false&stale_after=0", ["a2", "b1"]),
    ],
)
def test_the_list_filters(api, alice_token, several, query, ids):
    assert [v["id"] for v in listed(api, alice_token, query)["items"]] == ids


def test_the_list_is_paginated_with_a_next_link(api, alice_token, several):
    first = listed(api, alice_token, "?page_size=2")
    assert [v["id"] for v in first["items"]] == ["a2", "b1"]
    query = urllib.parse.urlsplit(first["next"]).query
    second = listed(api, alice_token, f"?{query}")
    assert [v["id"] for v in second["items"]] == ["a1"] and second["next"] is None


@pytest.mark.parametrize("query", ["?status=paused", "?stale=maybe", "?page=0", "?page_size=1000"])
def test_bad_list_parameters_are_400(api, alice_token, query):
    assert_error(api("GET", f"/api/sessions{query}", token=alice_token), 400, "invalid")


def test_the_attention_list_is_longest_overdue_first_and_holds_only_those_needing_one(
    api, alice, alice_token
):
    now = timezone.now()
    # Stale for 40 minutes (10 past the 30-minute threshold), last active most recently.
    append_event("quiet", START, {"title": "Quiet"}, user=alice, now=now - timedelta(minutes=40))
    # Blocked for 10 hours: 6 past the 4-hour threshold.
    append_event("waiting", START, {"title": "Waiting"}, user=alice, now=now - timedelta(hours=11))
    append_event("waiting", BLOCK, {"reason": "r"}, user=alice, now=now - timedelta(hours=10))
    append_event("busy", START, {"title": "Busy"}, user=alice, now=now)
    listed = api("GET", "/api/sessions?attention=true", token=alice_token).json()["items"]
    assert [view["id"] for view in listed] == ["waiting", "quiet"]
    status = api("GET", "/api/sessions?attention=true&status=active", token=alice_token).json()
    assert [view["id"] for view in status["items"]] == ["quiet"]
