"""Every fact about a session, derived from its events. Pure: no Django, no clock, no I/O.

Each function takes the session's events in stream (`seq`) order. An event is anything
with the attributes of `EventRecord` (model instances and `EventRecord` alike). Imported
logs can be odd, so nothing here raises on a history the append function would have
refused.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from sessions.domain.vocabulary import (
    ACTIVE,
    BLOCK,
    BLOCKED,
    CLOSE,
    DONE,
    IN_REVIEW,
    MAX_BLOCKERS_SHOWN,
    START,
    STATUS_AFTER,
    UNBLOCK,
)


def status(events):
    """The status the last transition left, or None for an empty stream."""
    current = None
    for event in events:
        current = STATUS_AFTER.get(event.type, current)
    return current


def blockers(events):
    """Every block with no later unblock, oldest first."""
    open_blocks = []
    for event in events:
        if event.type == BLOCK:
            open_blocks.append(event)
        elif event.type == UNBLOCK:
            open_blocks = []
    return open_blocks


def note_of(event):
    """The note an event carries (a block's reason), or None if it bears none."""
    return event.reason if event.type == BLOCK else event.note


def next_action(events):
    """The note of the most recent note-bearing event, or None."""
    for event in reversed(events):
        note = note_of(event)
        if note:
            return note
    return None


def _first_start(events):
    return next((event for event in events if event.type == START), None)


def owner(events):
    start = _first_start(events)
    return start.actor if start else None


def title(events):
    start = _first_start(events)
    return start.title if start else None


def opened_at(events):
    start = _first_start(events)
    return start.timestamp if start else None


def plan_node(events):
    """The (plan, node) the session works on, or (None, None)."""
    start = _first_start(events)
    return (start.plan, start.node) if start else (None, None)


def outcome(events):
    """How the session ended: its close's outcome (absent means done); None while open."""
    if not events or events[-1].type != CLOSE:
        return None
    return events[-1].outcome or DONE


def last_event_at(events):
    return events[-1].timestamp if events else None


def closed_at(events):
    """When the session was closed, or None while it is not closed."""
    if not events or events[-1].type != CLOSE:
        return None
    return events[-1].timestamp


def is_stale(events, now, threshold):
    """Active, and quiet for longer than `threshold` (a timedelta) at `now`."""
    if not events or status(events) != ACTIVE:
        return False
    return now - events[-1].timestamp > threshold


@dataclass(frozen=True)
class SessionView:
    """What every surface shows of a session."""

    id: str
    title: str | None
    owner: str | None
    status: str | None
    stale: bool
    blockers: list = field(default_factory=list)  # the latest open blocks, oldest first
    blocker_count: int = 0  # all the open blocks
    next_action: str | None = None
    opened_at: datetime | None = None
    last_event_at: datetime | None = None
    closed_at: datetime | None = None
    seq: int = 0
    plan: str | None = None
    node: str | None = None
    outcome: str | None = None
    time_in_state: dict = field(default_factory=dict)  # whole seconds per status
    attention: "Attention | None" = None


def session_view(session_id, events, now, thresholds=None, blocker_count=None, time_spent=None):
    """All projections of one session's events at `now`, with `thresholds` (default:
    `Thresholds()`).

    `events` may be the whole stream, or only the events the view depends on: the store
    reads those, with the open blocks' count and the time spent in each status (which
    need the whole stream, summed in SQL), so that a view costs the same at any length.
    """
    events = list(events)
    thresholds = thresholds or Thresholds()
    open_blocks = blockers(events)
    return SessionView(
        id=session_id,
        title=title(events),
        owner=owner(events),
        status=status(events),
        stale=is_stale(events, now, thresholds.stale),
        blockers=open_blocks[-MAX_BLOCKERS_SHOWN:],
        blocker_count=len(open_blocks) if blocker_count is None else blocker_count,
        next_action=next_action(events),
        opened_at=opened_at(events),
        last_event_at=last_event_at(events),
        closed_at=closed_at(events),
        seq=events[-1].seq if events else 0,
        plan=plan_node(events)[0],
        node=plan_node(events)[1],
        outcome=outcome(events),
        time_in_state=time_in_state(events, now) if time_spent is None else time_spent,
        attention=attention(events, now, thresholds) if events else None,
    )


def view_events(events, shown=MAX_BLOCKERS_SHOWN):
    """The events a session's view depends on, and how many blocks are open: first and
    last, the latest note-bearing one, the latest unblock and block, and the first and
    the latest `shown` blocks after that unblock (the first is where the blocked run
    began). `session_view` of these (with the count and the time spent) is the view of
    the whole stream; `store.read_view_events` reads them in SQL."""
    last_unblock = max((e.seq for e in events if e.type == UNBLOCK), default=0)
    open_blocks = [e.seq for e in events if e.type == BLOCK and e.seq > last_unblock]
    wanted = {1, events[-1].seq if events else 0, last_unblock, *open_blocks[-shown:]}
    wanted |= {*open_blocks[:1], max((e.seq for e in events if e.note is not None), default=0)}
    wanted |= {max((e.seq for e in events if e.type == BLOCK), default=0)}
    return [e for e in events if e.seq in wanted], len(open_blocks)


def view_events_after(chosen, open_blocks, event, shown=MAX_BLOCKERS_SHOWN):
    """`view_events` of a stream with `event` appended, from the stream's own (`chosen`
    and `open_blocks`): what an append knows without reading the stream again."""
    events, _ = view_events([*chosen, event], shown)
    if event.type == UNBLOCK:
        return events, 0
    return events, open_blocks + (event.type == BLOCK)


# Time and attention ----------------------------------------------------------------

TIMED_STATUSES = (ACTIVE, BLOCKED, IN_REVIEW)


def time_in_state(events, now):
    """Whole seconds spent active, blocked and in review: each event's status lasts until
    the next event, the last one until `now` (a closed session's last interval is not
    counted); summed, then rounded down."""
    totals = dict.fromkeys(TIMED_STATUSES, timedelta(0))
    current = None
    for event, following in zip(events, [*events[1:], None], strict=False):
        current = STATUS_AFTER.get(event.type, current)
        if current in totals:
            until = following.timestamp if following is not None else now
            totals[current] += max(until - event.timestamp, timedelta(0))
    return {status: int(total.total_seconds()) for status, total in totals.items()}


def time_in_state_from(spans, last, now):
    """`time_in_state` from the stream's spans between events, summed elsewhere (in
    SQL): `spans` maps an event type to the microseconds from each event of that type
    to the next; the last event's span runs to `now` unless it closed the session."""
    totals = dict.fromkeys(TIMED_STATUSES, 0)
    for event_type, microseconds in spans.items():
        if STATUS_AFTER.get(event_type) in totals:
            totals[STATUS_AFTER[event_type]] += microseconds
    if last is not None and STATUS_AFTER.get(last.type) in totals and now > last.timestamp:
        totals[STATUS_AFTER[last.type]] += (now - last.timestamp) // timedelta(microseconds=1)
    return {status: total // 1_000_000 for status, total in totals.items()}


@dataclass(frozen=True)
class Thresholds:
    """How long each status may last before a person should look (timedeltas)."""

    stale: timedelta = timedelta(minutes=30)
    blocked: timedelta = timedelta(minutes=240)
    review: timedelta = timedelta(minutes=1440)


STALE = "stale"
BLOCKED_LONG = "blocked_long"
REVIEW_LONG = "review_long"


class Attention(NamedTuple):
    kind: str  # stale, blocked_long or review_long
    since: datetime  # when the overdue interval began


def attention(events, now, thresholds=Thresholds()):
    """The one reason a person should look at the session now, or None."""
    current = status(events)
    if current not in (ACTIVE, BLOCKED, IN_REVIEW):
        return None
    since = _blocked_since(events) if current == BLOCKED else events[-1].timestamp
    return overdue(current, since, now, thresholds)


# What each status is called when it has lasted too long, and its threshold's name.
ATTENTION_OF = {
    ACTIVE: (STALE, "stale"),
    BLOCKED: (BLOCKED_LONG, "blocked"),
    IN_REVIEW: (REVIEW_LONG, "review"),
}


class AttentionLine(NamedTuple):
    """What the Needs attention strip shows of a session besides why it is overdue: all
    read off its events, so a line changes only with its stream."""

    id: str
    title: str | None
    owner: str | None
    blocker: str | None  # the reason of the latest open block
    next_action: str | None


def attention_line(session_id, events):
    """The strip's line of a session, from its events (or those its view depends on)."""
    open_blocks = blockers(events)
    blocker = open_blocks[-1].reason if open_blocks else None
    return AttentionLine(session_id, title(events), owner(events), blocker, next_action(events))


def overdue(current, since, now, thresholds):
    """The attention a session in status `current` since `since` needs at `now`: when
    the interval is longer than its threshold (strictly), else None. `since` is the
    last event for active and in review, the run's first block for blocked."""
    if since < overdue_before(now, thresholds)[current]:
        return Attention(ATTENTION_OF[current][0], since)
    return None


def overdue_before(now, thresholds):
    """For each status that can need attention, the moment before which a session in it
    since then needs attention at `now` (once for many sessions)."""
    return {current: now - threshold_of(current, thresholds) for current in ATTENTION_OF}


def threshold_of(current, thresholds):
    """How long a session may stay in status `current` before it needs attention."""
    return getattr(thresholds, ATTENTION_OF[current][1])


def _blocked_since(events):
    """The first block of the unbroken blocked run the session is in."""
    since = events[-1].timestamp
    for event in reversed(events):
        if STATUS_AFTER.get(event.type) != BLOCKED:
            break
        since = event.timestamp
    return since


def as_of(events, at):
    """The events of a stream that had happened by `at` (its history then)."""
    return [event for event in events if event.timestamp <= at]
