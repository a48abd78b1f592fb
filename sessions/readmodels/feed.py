"""The global feed: every event in position order, up to the safe position."""

from sessions import store
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
    race; a narrowed feed moves its cursor past the rows it skipped."""
    up_to = open_sessions.safe_position()
    found = store.read_feed(after, up_to, limit, event_type=event_type, stream=stream, plan=plan)
    next_after = found[-1][0] if len(found) == limit else max(after, up_to)
    return found, next_after
