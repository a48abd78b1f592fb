"""The global feed: every event in position order, up to the safe position."""

from sessions import store
from sessions.domain import vocabulary
from sessions.domain.records import EventRecord
from sessions.readmodels import open_sessions


def feed(
    after: int,
    limit: int,
    event_type: str | None = None,
    stream: str | None = None,
    plan: str | None = None,
) -> tuple[list[tuple[int, EventRecord]], int]:
    """(up to `limit` events after the position `after`, each as (position, record),
    the position to ask after next). Events are given only up to the safe position, so
    a consumer that keeps `next_after` never misses or repeats one, however the writers
    race; a narrowed feed moves its cursor past the rows it skipped. A page holds at most
    `limit` events and about `vocabulary.MAX_FEED_PAGE_CHARACTERS` of their text: a page
    cut by its size ends at its last event, like a full one. A `limit` of 0 gives no events
    and the safe position: a follower that starts there misses nothing from now on."""
    up_to = open_sessions.safe_position()
    if not limit:  # where to follow from now on
        return [], max(after, up_to)
    found = store.read_feed(after, up_to, limit, event_type=event_type, stream=stream, plan=plan)
    kept = _within_characters(found, vocabulary.MAX_FEED_PAGE_CHARACTERS)
    next_after = found[-1][0] if len(found) == limit else max(after, up_to)
    if len(kept) < len(found):
        next_after = kept[-1][0]  # a full page, cut by its size
    return kept, next_after


def _within_characters(
    found: list[tuple[int, EventRecord]], most: int
) -> list[tuple[int, EventRecord]]:
    """The leading events of `found` whose text fits in `most` characters (always the
    first, however long, so that a feed always moves on)."""
    total = 0
    for index, (_, event) in enumerate(found):
        total += _characters(event)
        if total > most and index:
            return found[:index]
    return found


def _characters(event: EventRecord) -> int:
    """About how much text an event carries: its text fields and its graph changes."""
    texts = (event.title, event.reason, event.note)
    graph = (event.nodes, event.needs, event.drop_needs, event.retire)
    return sum(len(t) for t in texts if t) + sum(len(repr(g)) for g in graph if g)
