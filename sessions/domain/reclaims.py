"""A reclaim's close (docs/rules.md, "Liveness"): the note a reclaim writes on the lapsed
session it closes, and reading it back."""

import re
from collections.abc import Callable
from datetime import datetime

from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import CLOSE, LAPSED

# The note of a reclaim's close (docs/rules.md, "Liveness"): written by the reclaim, read back
# by what reports it (the Slack line's "silent since").
_RECLAIM_NOTE = "no activity since {since}; node reclaimed by session {session}"
_RECLAIM_NOTE_PATTERN = re.compile(r"no activity since (\S+); node reclaimed by session (\S+)")


def reclaim_note(since: datetime, session_id: str, format_moment: Callable[[datetime], str]) -> str:
    """The note of the close a reclaim appends to a lapsed session: since when it was
    silent (written by `format_moment`), and the session that took its node."""
    return _RECLAIM_NOTE.format(since=format_moment(since), session=session_id)


def reclaimed(event: EventRecord) -> tuple[str, ...] | None:
    """(silent since, as written; the session that took the node) of a reclaim's close,
    or None for any other event."""
    if event.type != CLOSE or event.outcome != LAPSED or not event.note:
        return None
    found = _RECLAIM_NOTE_PATTERN.fullmatch(event.note)
    return found.groups() if found else None
