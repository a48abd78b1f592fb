"""What the tower tells a person in their browser (the board's "Notify me"): one of their
sessions blocked, sent to review (it waits on them) or messaged by someone else, read
off the feed after the browser's cursor; and their sessions lapsed now (derived at
read time, never stored: each keyed by its session and the moment it went silent, so
the browser shows it once)."""

from datetime import datetime
from typing import NamedTuple

from sessions import store
from sessions.domain import projections, vocabulary
from sessions.readmodels import board as board_model
from sessions.readmodels import feed as feed_model
from sessions.readmodels import session_views

# The feed's events a session's owner hears of, and how each is said.
TOLD = {
    vocabulary.BLOCK: "blocked",
    vocabulary.REVIEW: "waits on your review",
    vocabulary.MESSAGE: "has a message",
}
PAGE = 200
LAPSED_SHOWN = 20


class Notice(NamedTuple):
    key: str  # the browser shows each key once
    title: str
    body: str
    session: str


def notices(owner: str, after: int | None, now: datetime) -> tuple[list[Notice], int]:
    """(what `owner` should hear of since position `after`, the position to ask after
    next). With no `after`, nothing from the past: only where to start."""
    if after is None:
        return [], feed_model.feed(0, 0)[1]
    found, next_after = feed_model.feed(after, PAGE)
    told = [(p, e) for p, e in found if e.type in TOLD]
    views = session_views.session_views(sorted({e.session for _, e in told}), now)
    items = []
    for position, event in told:
        view = views.get(event.session)
        if view is None or view.owner != owner:
            continue
        if event.type == vocabulary.MESSAGE and event.actor == owner:
            continue  # your own message to your own session
        words = event.reason or event.note or ""
        title = f"{view.title or view.id} {TOLD[event.type]}"
        items.append(Notice(f"event:{position}", title, f"{event.actor}: {words}", view.id))
    return items + _lapsed(owner, now), next_after


def _lapsed(owner: str, now: datetime) -> list[Notice]:
    query = store.SessionQuery(owner=owner, attention=True, limit=LAPSED_SHOWN)
    ids = board_model.listing(query, now)
    views = session_views.session_views(ids, now)
    found = []
    for view in views.values():
        if view is None or view.attention is None:
            continue
        if view.attention.kind != projections.LAPSED:
            continue
        since = view.attention.since.isoformat()
        body = f"silent since {view.attention.since:%H:%M} UTC: its node can be reclaimed"
        found.append(
            Notice(f"lapsed:{view.id}:{since}", f"{view.title or view.id} lapsed", body, view.id)
        )
    return found
