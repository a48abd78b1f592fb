"""The one append function: validation, transitions, timestamps, seq, expected_seq,
idempotency keys and who may append."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.domain.vocabulary import BLOCK, CLOSE, PLAN_CREATE, REVIEW, START, UNBLOCK
from sessions.models import Event
from sessions.rules.append import append_event
from sessions.rules.refusals import Conflict, Forbidden, InvalidEvent, UnknownSession
from tests.conftest import projected_status


def count():
    return Event.objects.count()


def test_start_creates_seq_one_owned_by_the_actor(alice):
    result = append_event("s1", START, {"title": "Ship it"}, user=alice)
    assert result.created
    assert (result.event.seq, result.event.actor, result.event.title) == (1, "alice", "Ship it")


def test_appends_take_the_next_seq(started, alice):
    append_event(started, BLOCK, {"reason": "r"}, user=alice)
    event = append_event(started, UNBLOCK, {}, user=alice).event
    assert event.seq == 3


def test_timestamp_never_goes_backwards(started, alice):
    first = Event.objects.get(session=started, seq=1)
    earlier = first.timestamp - timedelta(hours=1)
    event = append_event(started, BLOCK, {"reason": "r"}, user=alice, now=earlier).event
    assert event.timestamp == first.timestamp


def test_timestamp_is_now_when_the_clock_moved_on(started, alice):
    later = timezone.now() + timedelta(minutes=5)
    event = append_event(started, BLOCK, {"reason": "r"}, user=alice, now=later).event
    assert event.timestamp == later


@pytest.mark.parametrize(
    ("event_type", "fields", "field"),
    [
        (START, {}, "title"),
        (START, {"title": "x" * 201}, "title"),
        (BLOCK, {}, "reason"),
        (BLOCK, {"reason": "   "}, "reason"),
        (BLOCK, {"reason": "x" * 2001}, "reason"),
        (CLOSE, {"note": "x" * 2001}, "note"),
        (CLOSE, {"note": "nul\x00byte"}, "note"),
        (CLOSE, {"reason": "not a close field"}, "reason"),
        (BLOCK, {"reason": "r", "status": "blocked"}, "status"),
        ("session_pause", {}, "type"),
    ],
)
def test_invalid_fields_are_refused_and_nothing_is_written(
    started, alice, event_type, fields, field
):
    before = count()
    with pytest.raises(InvalidEvent) as refused:
        append_event(started, event_type, fields, user=alice)
    assert field in refused.value.errors
    assert count() == before


@pytest.mark.parametrize("session_id", ["", ".hidden", "-x", "../etc", "a/b", "x" * 65, "sp ace"])
def test_invalid_session_ids_are_refused(alice, session_id):
    with pytest.raises(InvalidEvent) as refused:
        append_event(session_id, START, {"title": "t"}, user=alice)
    assert "session" in refused.value.errors
    assert count() == 0


def test_a_note_at_the_limit_is_accepted(started, alice):
    event = append_event(started, CLOSE, {"note": "é" * 2000}, user=alice).event
    assert event.note == "é" * 2000


@pytest.mark.parametrize(
    ("history", "event_type", "fields"),
    [
        ([], UNBLOCK, {}),
        ([REVIEW], REVIEW, {}),
        ([BLOCK], REVIEW, {}),
        ([CLOSE], BLOCK, {"reason": "r"}),
        ([CLOSE], CLOSE, {}),
        ([], START, {"title": "again"}),
    ],
)
def test_transitions_outside_the_table_are_conflicts(started, alice, history, event_type, fields):
    for earlier in history:
        append_event(started, earlier, {"reason": "r"} if earlier == BLOCK else {}, user=alice)
    before = count()
    with pytest.raises(Conflict) as refused:
        append_event(started, event_type, fields, user=alice)
    current = projected_status(started)
    assert current in refused.value.detail or refused.value.code == "session_exists"
    assert count() == before


def test_a_closed_session_refuses_with_its_status_in_the_message(started, alice):
    append_event(started, CLOSE, {}, user=alice)
    with pytest.raises(Conflict, match="closed"):
        append_event(started, REVIEW, {}, user=alice)


def test_a_refusal_after_a_close_names_who_closed_it_and_their_note(started, alice, lead):
    append_event(started, CLOSE, {"note": "merged by hand"}, user=lead)
    with pytest.raises(Conflict) as refused:
        append_event(started, BLOCK, {"reason": "r"}, user=alice)
    assert refused.value.code == "transition_not_allowed"
    assert "(closed by lead: merged by hand)" in refused.value.detail


def test_a_closed_session_s_worker_learns_who_closed_it_even_with_a_stale_expected_seq(
    started, alice, lead
):
    append_event(started, CLOSE, {"note": "taken over"}, user=lead)
    with pytest.raises(Conflict) as refused:
        append_event(started, "session_progress", {}, user=alice, expected_seq=1)
    assert refused.value.code == "transition_not_allowed"
    assert "closed by lead: taken over" in refused.value.detail
    assert count() == 2


def test_an_unknown_session_is_reported_as_such(alice):
    with pytest.raises(UnknownSession):
        append_event("nope", BLOCK, {"reason": "r"}, user=alice)


def test_expected_seq_matching_the_tail_appends(started, alice):
    assert append_event(started, BLOCK, {"reason": "r"}, user=alice, expected_seq=1).created


def test_a_stale_expected_seq_is_a_conflict(started, alice):
    append_event(started, BLOCK, {"reason": "r"}, user=alice)
    with pytest.raises(Conflict) as refused:
        append_event(started, UNBLOCK, {}, user=alice, expected_seq=1)
    assert refused.value.code == "stale_expected_seq" and "at seq 2" in refused.value.detail
    assert count() == 2


def test_a_repeated_idempotency_key_returns_the_first_event(started, alice):
    first = append_event(started, BLOCK, {"reason": "r"}, user=alice, idempotency_key="k1")
    again = append_event(started, BLOCK, {"reason": "r"}, user=alice, idempotency_key="k1")
    assert not again.created
    assert again.event == first.event
    assert count() == 2


def test_the_idempotency_key_is_checked_before_expected_seq_and_transition(started, alice):
    append_event(started, CLOSE, {}, user=alice, expected_seq=1, idempotency_key="k1")
    retry = append_event(started, CLOSE, {}, user=alice, expected_seq=1, idempotency_key="k1")
    assert retry.event.seq == 2 and not retry.created


def test_a_plan_s_key_does_not_answer_a_session_request_on_its_id(alice):
    plan = {"title": "P", "nodes": [{"key": "a", "title": "A"}]}
    append_event("p", PLAN_CREATE, plan, user=alice, idempotency_key="k")
    with pytest.raises(Conflict) as refused:
        append_event("p", START, {"title": "t"}, user=alice, idempotency_key="k")
    assert refused.value.code == "session_exists"
    with pytest.raises(UnknownSession):
        append_event("p", BLOCK, {"reason": "r"}, user=alice, idempotency_key="k")
    assert count() == 1


def test_idempotency_keys_are_per_session(started, alice):
    append_event(started, BLOCK, {"reason": "r"}, user=alice, idempotency_key="k")
    append_event("s2", START, {"title": "t"}, user=alice, idempotency_key="k")
    assert count() == 3


def test_someone_else_may_not_append_to_a_session(started, bob):
    with pytest.raises(Forbidden):
        append_event(started, BLOCK, {"reason": "r"}, user=bob)
    assert count() == 1


def test_a_holder_of_act_on_any_session_may_append(started, lead):
    event = append_event(started, BLOCK, {"reason": "r"}, user=lead).event
    assert event.actor == "lead"


def test_anyone_signed_in_may_start_a_session(bob):
    assert append_event("bobs", START, {"title": "t"}, user=bob).event.actor == "bob"


def test_an_anonymous_user_may_not_append(db):
    from django.contrib.auth.models import AnonymousUser

    with pytest.raises(Forbidden):
        append_event("s", START, {"title": "t"}, user=AnonymousUser())
    assert count() == 0


@pytest.mark.parametrize("expected_seq", [-1, "3", 1.5, True])
def test_expected_seq_must_be_a_whole_number(started, alice, expected_seq):
    with pytest.raises(InvalidEvent) as refused:
        append_event(started, CLOSE, {}, user=alice, expected_seq=expected_seq)
    assert "expected_seq" in refused.value.errors
