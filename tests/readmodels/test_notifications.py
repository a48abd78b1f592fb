"""What the board's "Notify me" tells a person (issue 25): their sessions blocking,
waiting on their review, messaged by someone else, lapsing; nobody else's; nothing from
before they asked."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.domain.vocabulary import BLOCK, MESSAGE, PLAN_CREATE, PROGRESS, REVIEW, START
from sessions.rules.append import append_event

pytestmark = pytest.mark.django_db(transaction=True)


def notices(client, after=None):
    answer = client.get("/notifications/" + (f"?after={after}" if after is not None else ""))
    assert answer.status_code == 200
    return answer.json()


def test_the_first_ask_gives_where_to_start_and_nothing_from_before(alice_client, started, alice):
    append_event(started, BLOCK, {"reason": "old news"}, user=alice)
    first = notices(alice_client)
    assert first["items"] == [] and first["next_after"] > 0


def test_a_persons_session_blocking_or_waiting_on_review_is_told(alice_client, started, alice):
    cursor = notices(alice_client)["next_after"]
    append_event(started, BLOCK, {"reason": "which database?"}, user=alice)
    found = notices(alice_client, cursor)["items"]
    assert [(i["title"], i["body"]) for i in found] == [
        ("Ship it blocked", "alice: which database?")
    ]
    assert found[0]["url"] == f"/sessions/{started}/"
    append_event(started, "session_unblock", {}, user=alice)
    append_event(started, REVIEW, {"note": "PR 7"}, user=alice)
    after = notices(alice_client, notices(alice_client, cursor)["next_after"])
    assert after["items"] == []  # each told once: the cursor moved past them


def test_a_message_from_someone_else_is_told_and_ones_own_is_not(
    alice_client, started, alice, lead
):
    cursor = notices(alice_client)["next_after"]
    append_event(started, MESSAGE, {"note": "note to self"}, user=alice)
    append_event(started, MESSAGE, {"note": "use staging"}, user=lead)
    found = notices(alice_client, cursor)["items"]
    assert [i["body"] for i in found] == ["lead: use staging"]


def test_someone_elses_sessions_are_not_told(alice_client, alice, bob):
    cursor = notices(alice_client)["next_after"]
    append_event("bobs", START, {"title": "Bob's"}, user=bob)
    append_event("bobs", BLOCK, {"reason": "stuck"}, user=bob)
    assert notices(alice_client, cursor)["items"] == []


def test_a_lapsed_session_is_told_keyed_by_when_it_went_silent(alice_client, alice):
    then = timezone.now() - timedelta(hours=2)
    plan = {"title": "R", "nodes": [{"key": "a", "title": "A"}], "lease": 30}
    append_event("rel", PLAN_CREATE, plan, user=alice, now=then)
    append_event("on-a", START, {"plan": "rel", "node": "a"}, user=alice, now=then)
    append_event("on-a", PROGRESS, {}, user=alice, now=then)
    found = notices(alice_client, notices(alice_client)["next_after"])["items"]
    assert [i["title"] for i in found] == ["A lapsed"]
    assert found[0]["key"].startswith("lapsed:on-a:")


def test_a_bad_cursor_is_refused(alice_client):
    answer = alice_client.get("/notifications/?after=x")
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid"
