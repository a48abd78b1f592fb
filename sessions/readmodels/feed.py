"""The global feed: every event in position order, up to the safe position; and the long
poll that waits for the next one."""

import threading
import time

from sessions import config, store
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


# A long poll holds a server thread while it waits: at most this many wait at once in a
# process (of `make run`'s four threads a worker), the others answered at once, so that
# waiting followers never starve the board and the API.
LONG_POLLS_MOST = 2
_LONG_POLLS = threading.BoundedSemaphore(LONG_POLLS_MOST)
RECHECK_SECONDS = 0.1  # how often a waiting poll asks for the safe position (one small read)
_ENDING = threading.Event()  # set while `end_waits` ends every wait


def feed_waiting(
    after: int, limit: int, wait_seconds: float, **narrowed: str | None
) -> tuple[list[tuple[int, EventRecord]], int]:
    """`feed`, waiting up to `wait_seconds` for an event when there is none yet: the page
    comes as soon as the safe position passes one that matches. Each look is one read of
    the position kept in this process; the feed is read again only when it moved. It
    waits no longer than `FEED_WAIT_SECONDS`; with every waiting place taken, not at all."""
    found, next_after = feed(after, limit, **narrowed)
    wait_seconds = min(wait_seconds, config.current().feed_wait_seconds)
    if found or not limit or wait_seconds <= 0 or not _LONG_POLLS.acquire(blocking=False):
        return found, next_after
    try:
        deadline = time.monotonic() + wait_seconds
        while not found and (left := deadline - time.monotonic()) > 0:
            if _ENDING.wait(min(RECHECK_SECONDS, left)):
                break
            if open_sessions.safe_position() > next_after:
                found, next_after = feed(next_after, limit, **narrowed)
    finally:
        _LONG_POLLS.release()
    return found, next_after


def end_waits(within: float = 5.0) -> None:
    """Every long poll of this process answered now, with what it has, and none left
    waiting when this returns (bounded by `within`): a test's end, whose database goes
    away, does not wait out a poll its client left."""
    _ENDING.set()
    held = []
    try:
        held = [_LONG_POLLS.acquire(timeout=within) for _ in range(LONG_POLLS_MOST)]
    finally:
        for _ in filter(None, held):
            _LONG_POLLS.release()
        _ENDING.clear()


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
