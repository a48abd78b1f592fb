"""Since you last looked: cards with events since the viewer's previous visit are marked;
the visit is kept per person, outside the event table."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.domain.vocabulary import BLOCK, START
from sessions.models import BoardVisit, Event
from sessions.rules.append import append_event
from sessions.store import visits

pytestmark = pytest.mark.django_db


def test_a_first_visit_marks_nothing(alice):
    assert visits.look(alice, timezone.now()) is None


def test_a_visit_after_a_gap_marks_from_the_end_of_the_previous_one(alice):
    first = timezone.now() - timedelta(hours=3)
    visits.look(alice, first)
    visits.look(alice, first + timedelta(minutes=10))
    assert visits.look(alice, first + timedelta(hours=2)) == first + timedelta(minutes=10)


def test_reloading_within_a_visit_keeps_the_marks(alice):
    first = timezone.now() - timedelta(hours=3)
    visits.look(alice, first)
    back = first + timedelta(hours=1)
    assert visits.look(alice, back) == first
    assert visits.look(alice, back + timedelta(minutes=5)) == first


def test_reloading_within_a_minute_writes_nothing(alice):
    first = timezone.now() - timedelta(hours=3)
    visits.look(alice, first)
    visits.look(alice, first + timedelta(seconds=30))
    assert BoardVisit.objects.get(user=alice).seen_at == first
    visits.look(alice, first + timedelta(seconds=90))
    assert BoardVisit.objects.get(user=alice).seen_at == first + timedelta(seconds=90)


def test_visits_are_each_person_s_own(alice, bob):
    first = timezone.now() - timedelta(hours=3)
    visits.look(alice, first)
    visits.look(alice, first + timedelta(hours=1))
    assert visits.marks_since(alice) == first
    assert visits.marks_since(bob) is None


def test_the_board_marks_the_cards_changed_since_the_previous_visit(alice, bob, alice_client):
    earlier = timezone.now() - timedelta(hours=2)
    append_event("old-news", START, {"title": "Old news"}, user=bob, now=earlier)
    append_event("fresh", START, {"title": "Fresh"}, user=bob, now=earlier)
    visits.look(alice, earlier + timedelta(minutes=1))
    append_event("fresh", BLOCK, {"reason": "waiting"}, user=bob)
    page = alice_client.get("/").content.decode()
    assert card_of(page, "fresh").count('class="badge new"') == 1
    assert 'class="badge new"' not in card_of(page, "old-news")
    assert "1 session marked" in page


def test_polls_neither_record_a_visit_nor_lose_the_marks(alice, bob, alice_client):
    earlier = timezone.now() - timedelta(hours=2)
    visits.look(alice, earlier)
    alice_client.get("/")
    seen = BoardVisit.objects.get(user=alice).seen_at
    append_event("fresh", START, {"title": "Fresh"}, user=bob)
    page = alice_client.get("/", headers={"HX-Request": "true"}).content.decode()
    assert 'class="badge new"' in card_of(page, "fresh")
    assert BoardVisit.objects.get(user=alice).seen_at == seen


def test_the_board_as_of_a_moment_marks_nothing_and_records_no_visit(alice, bob, alice_client):
    append_event("fresh", START, {"title": "Fresh"}, user=bob)
    at = (timezone.now() + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S")
    page = alice_client.get(f"/?at={at}").content.decode()
    assert 'class="badge new"' not in page
    assert not BoardVisit.objects.filter(user=alice).exists()


def test_looking_writes_no_event(alice, alice_client):
    alice_client.get("/")
    assert not Event.objects.exists()


def card_of(page, session_id):
    start = page.index(f'id="card-{session_id}"')
    return page[start : page.index("</article>", start)]
