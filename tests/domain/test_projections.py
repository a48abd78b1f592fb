"""The projections (docs/rules.md, "Projections"): conformance cases, one test per rule, and
properties."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions.domain import jsonl, projections
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import (
    ACTIVE,
    BLOCK,
    BLOCKED,
    CLOSE,
    CLOSED,
    EVENT_TYPES,
    IN_REVIEW,
    MESSAGE,
    PROGRESS,
    REVIEW,
    START,
    STATUS_AFTER,
    UNBLOCK,
    USAGE,
    WORK,
)
from tests.conftest import CONFORMANCE, conformance_expected, conformance_now

T0 = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


def stream(*specs):
    """Events from (type, note-or-reason) pairs, one minute apart."""
    events = []
    for seq, (event_type, text) in enumerate(specs, start=1):
        fields = {"reason": text} if event_type == BLOCK else {"note": text}
        if event_type == START:
            fields["title"] = "A title"
        events.append(
            EventRecord("s", seq, event_type, T0 + timedelta(minutes=seq), f"actor{seq}", **fields)
        )
    return events


@pytest.mark.parametrize("session_id", sorted(conformance_expected()["sessions"]))
def test_conformance_log_projects_to_its_expected_view(session_id):
    expected = conformance_expected()["sessions"][session_id]
    data = (CONFORMANCE / "logs" / f"{session_id}.jsonl").read_bytes()
    _, events = jsonl.decode_log(f"{session_id}.jsonl", data)
    minutes = conformance_expected()["stale_threshold_minutes"]
    limits = projections.Thresholds(stale=timedelta(minutes=minutes))
    view = projections.session_view(session_id, events, conformance_now(), limits)
    assert view.status == expected["status"]
    assert [block.reason for block in view.blockers] == expected["blockers"]
    assert view.next_action == expected["next_action"]
    assert view.stale == expected["stale"]
    assert view.owner == expected["owner"]
    assert view.title == expected["title"]
    assert view.seq == expected["seq"]


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        ([START], ACTIVE),
        ([START, BLOCK], BLOCKED),
        ([START, BLOCK, UNBLOCK], ACTIVE),
        ([START, REVIEW], IN_REVIEW),
        ([START, REVIEW, BLOCK], BLOCKED),
        ([START, BLOCK, CLOSE], CLOSED),
    ],
)
def test_status_is_set_by_the_last_transition(types, expected):
    assert projections.status(stream(*[(t, None) for t in types])) == expected


def test_status_of_an_empty_stream_is_none():
    assert projections.status([]) is None


def test_blockers_are_every_block_without_a_later_unblock():
    events = stream((START, None), (BLOCK, "one"), (BLOCK, "two"))
    assert [b.reason for b in projections.blockers(events)] == ["one", "two"]


def test_an_unblock_clears_every_block_before_it():
    events = stream(
        (START, None), (BLOCK, "one"), (BLOCK, "two"), (UNBLOCK, None), (BLOCK, "three")
    )
    assert [b.reason for b in projections.blockers(events)] == ["three"]


def test_next_action_is_the_note_of_the_latest_note_bearing_event():
    events = stream((START, "first"), (REVIEW, "look at PR"), (BLOCK, "waiting"))
    assert projections.next_action(events) == "waiting"


def test_a_bare_unblock_keeps_the_blockers_reason_as_next_action():
    events = stream((START, "first"), (BLOCK, "needs keys"), (UNBLOCK, None))
    assert projections.next_action(events) == "needs keys"


def test_an_unblock_with_a_note_sets_the_next_action():
    events = stream((START, "first"), (BLOCK, "needs keys"), (UNBLOCK, "deploy"))
    assert projections.next_action(events) == "deploy"


def test_next_action_is_none_without_any_note():
    assert projections.next_action(stream((START, None))) is None


def test_an_active_session_quiet_past_the_threshold_is_stale():
    events = stream((START, None))
    now = events[-1].timestamp + timedelta(minutes=31)
    assert projections.is_stale(events, now, timedelta(minutes=30))


def test_an_active_session_quiet_exactly_the_threshold_is_not_stale():
    events = stream((START, None))
    now = events[-1].timestamp + timedelta(minutes=30)
    assert not projections.is_stale(events, now, timedelta(minutes=30))


@pytest.mark.parametrize("last", [BLOCK, REVIEW, CLOSE])
def test_only_active_sessions_go_stale(last):
    events = stream((START, None), (last, "x"))
    now = events[-1].timestamp + timedelta(days=3)
    assert not projections.is_stale(events, now, timedelta(minutes=30))


def test_owner_title_and_times_come_from_the_stream():
    events = stream((START, None), (BLOCK, "x"), (UNBLOCK, None), (CLOSE, None))
    assert projections.owner(events) == "actor1"
    assert projections.title(events) == "A title"
    assert projections.opened_at(events) == events[0].timestamp
    assert projections.last_event_at(events) == events[-1].timestamp
    assert projections.closed_at(events) == events[-1].timestamp


def test_closed_at_is_none_while_the_session_is_open():
    assert projections.closed_at(stream((START, None), (REVIEW, None))) is None


# Properties: any sequence of events at all, including ones append would refuse.

texts = st.one_of(st.none(), st.text(max_size=20))
events_strategy = st.lists(
    st.tuples(st.sampled_from(EVENT_TYPES), texts, st.integers(min_value=0, max_value=10**6)),
    max_size=30,
).map(
    lambda items: [
        EventRecord(
            "s",
            seq,
            event_type,
            T0 + timedelta(seconds=offset),
            "someone",
            title=text if event_type == START else None,
            reason=text if event_type == BLOCK else None,
            note=None if event_type in (BLOCK, WORK, USAGE) else text,
            branch=text if event_type == WORK else None,
            model=text if event_type == USAGE else None,
        )
        for seq, (event_type, text, offset) in enumerate(items, start=1)
    ]
)


@given(events_strategy, st.integers(min_value=0, max_value=10**7))
def test_no_event_sequence_makes_a_projection_raise(events, minutes):
    view = projections.session_view("s", events, T0 + timedelta(minutes=minutes))
    assert view.seq == len(events)


@given(events_strategy)
def test_status_agrees_with_the_last_transitions_type(events):
    transitions = [e for e in events if e.type in STATUS_AFTER]
    expected = STATUS_AFTER[transitions[-1].type] if transitions else None
    assert projections.status(events) == expected


@given(events_strategy)
def test_blockers_agree_with_blocks_after_the_last_unblock(events):
    unblocks = [i for i, e in enumerate(events) if e.type == UNBLOCK]
    after = unblocks[-1] + 1 if unblocks else 0
    assert projections.blockers(events) == [e for e in events[after:] if e.type == BLOCK]


@given(events_strategy)
def test_next_action_agrees_with_the_latest_note(events):
    bearing = [e for e in events if e.type not in (PROGRESS, MESSAGE, WORK, USAGE)]
    notes = [(e.reason if e.type == BLOCK else e.note) for e in bearing]
    notes = [n for n in notes if n]
    assert projections.next_action(events) == (notes[-1] if notes else None)


@given(events_strategy, st.integers(min_value=0, max_value=10**7), st.integers(1, 10**4))
def test_is_stale_agrees_with_its_rule(events, minutes, threshold_minutes):
    now = T0 + timedelta(minutes=minutes)
    threshold = timedelta(minutes=threshold_minutes)
    transitions = [e for e in events if e.type in STATUS_AFTER]
    activity = [e for e in events if e.type not in (MESSAGE, WORK)]
    expected = (
        bool(transitions)
        and transitions[-1].type in (START, UNBLOCK)
        and (now - activity[-1].timestamp > threshold)
    )
    assert projections.is_stale(events, now, threshold) == expected


@given(events_strategy)
def test_a_next_action_names_its_block_exactly_when_a_block_gave_it(events):
    givers = [e for e in events if projections.note_of(e)]
    from_block = bool(givers) and givers[-1].type == BLOCK
    found = projections.next_action_block(events)
    assert found == (givers[-1].timestamp if from_block else None)
    assert (found is not None) <= (projections.next_action(events) is not None)
