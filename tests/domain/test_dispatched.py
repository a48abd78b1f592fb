"""Which agent runs a dispatched session, and where, read off the dispatcher's first
note (docs/rules.md, "Running the plan": `dispatched: claude-code on HOST`)."""

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from sessions.domain.plans import DISPATCH_NOTE_SEQ_MOST, Dispatched, dispatched
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import MESSAGE, PROGRESS

AT = datetime(2026, 12, 5, 12, tzinfo=UTC)


def note(text, seq=2, kind=PROGRESS):
    return EventRecord("s", seq, kind, AT, "alice", note=text)


def test_a_dispatchers_note_names_the_agent_and_the_machine():
    said = dispatched(note("dispatched: claude-code on build-01"))
    assert said == Dispatched("claude-code", "build-01", AT)


def test_an_agent_with_on_in_its_name_keeps_it_the_host_is_the_last_word():
    assert dispatched(note("dispatched: run on ci on box")).agent == "run on ci"


def test_a_note_past_the_streams_first_events_is_not_the_dispatchers():
    assert dispatched(note("dispatched: codex on b", seq=DISPATCH_NOTE_SEQ_MOST + 1)) is None


def test_other_notes_and_other_events_say_nothing():
    assert dispatched(note("editing models.py")) is None
    assert dispatched(note("dispatched: nobody")) is None
    assert dispatched(note("dispatched: codex on b", kind=MESSAGE)) is None


@given(
    st.text(min_size=1).filter(lambda t: t.strip() == t and "\n" not in t),
    st.from_regex(r"[a-z0-9][a-z0-9.-]{0,30}", fullmatch=True),
)
def test_what_the_dispatcher_writes_reads_back_as_it_was(agent, host):
    assert dispatched(note(f"dispatched: {agent} on {host}")) == Dispatched(agent, host, AT)
