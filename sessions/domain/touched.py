"""The paths a session wrote (docs/rules.md, "Space"): what its heartbeats reported,
distinct, most recent first (within one report, the later in its list first). Pure."""

from collections.abc import Iterable

from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import PROGRESS

TOUCHED_SHOWN = 200  # a view lists at most this many (`touched_count` has them all)


def touched(events: Iterable[EventRecord], most: int = TOUCHED_SHOWN) -> tuple[list[str], int]:
    """The distinct paths reported in `events`, most recent first, at most `most` of
    them, and how many there are in all."""
    found: dict[str, None] = {}
    for event in reversed(list(events)):
        if event.type == PROGRESS and event.paths:
            for path in reversed(event.paths):
                found.setdefault(path, None)
    return list(found)[:most], len(found)
