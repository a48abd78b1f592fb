"""Hypothesis strategies of streams."""

from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import (
    ALLOWED_FROM,
    BLOCK,
    MESSAGE,
    START,
    STATUS_AFTER,
    TOKEN_FIELDS,
    USAGE,
    WORK,
)


@st.composite
def streams(draw, max_events=30):
    """Any stream the transition table allows, notes present or not."""
    moment = datetime(2026, 11, 29, 8, tzinfo=UTC)
    events, status = [], None
    for seq in range(1, draw(st.integers(1, max_events)) + 1):
        allowed = [t for t, sources in ALLOWED_FROM.items() if status in sources]
        if not allowed:
            break
        kind = draw(st.sampled_from(allowed))
        fields = (
            {"reason": f"r{seq}"}
            if kind == BLOCK
            else {"note": draw(st.none() | st.just(f"n{seq}"))}
        )
        if kind == START:
            fields["title"] = "t"
        if kind == MESSAGE:
            fields["note"] = f"m{seq}"
        if kind == WORK:  # where the work lands: a branch, the head commit moving
            fields = {"branch": "feature", "commit": f"{seq:040x}"}
        if kind == USAGE:  # a model's totals so far, growing
            fields = {"model": "claude-opus-5", **dict.fromkeys(TOKEN_FIELDS, seq * 1000)}
        moment += timedelta(minutes=draw(st.integers(0, 90)))
        events.append(EventRecord("g", seq, kind, moment, "a", **fields))
        status = STATUS_AFTER.get(kind, status)  # progress and messages keep it
    return events
