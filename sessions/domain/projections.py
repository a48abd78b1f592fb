"""Every fact about a session, derived from its events. Pure: no Django, no clock, no I/O.

Each function takes the session's events in stream (`seq`) order: `EventRecord`s (a model
instance, which has the same attributes, serves as well). Imported
logs can be odd, so nothing here raises on a history the append function would have
refused.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from sessions.domain.records import EventRecord, Events
from sessions.domain.vocabulary import (
    ACTIVE,
    ACTIVITY_TYPES,
    BLOCK,
    BLOCKED,
    CLOSE,
    DONE,
    IN_REVIEW,
    MAX_BLOCKERS_SHOWN,
    MESSAGE,
    NOTE_BEARING,
    PROGRESS,
    START,
    STATUS_AFTER,
    UNBLOCK,
    USAGE,
    WORK,
)


def status(events: Events) -> str | None:
    """The status the last transition left, or None for an empty stream (read from the
    end: what follows the last transition, heartbeats and reports, is most of a
    stream)."""
    last = last_transition(events)
    return None if last is None else STATUS_AFTER[last.type]


def blockers(events: Events) -> list[EventRecord]:
    """Every block with no later unblock, oldest first."""
    open_blocks = []
    for event in events:
        if event.type == BLOCK:
            open_blocks.append(event)
        elif event.type == UNBLOCK:
            open_blocks = []
    return open_blocks


def note_of(event: EventRecord) -> str | None:
    """The note an event bears as a next action (a block's reason), or None: progress
    and messages carry notes that are not."""
    if event.type not in NOTE_BEARING:
        return None
    return event.reason if event.type == BLOCK else event.note


def next_action_block(events: Events) -> datetime | None:
    """When the next action is a block's reason (a bare unblock keeps it, as the seed
    says): that block's moment, so that every page can say where the words came from
    and an active card's "Next" does not read as a live blocker; else None."""
    for event in reversed(events):
        if note_of(event):
            return event.timestamp if event.type == BLOCK else None
    return None


def next_action(events: Events) -> str | None:
    """The note of the most recent note-bearing event, or None."""
    for event in reversed(events):
        note = note_of(event)
        if note:
            return note
    return None


def _first_start(events: Events) -> EventRecord | None:
    return next((event for event in events if event.type == START), None)


def owner(events: Events) -> str | None:
    start = _first_start(events)
    return start.actor if start else None


def title(events: Events) -> str | None:
    start = _first_start(events)
    return start.title if start else None


def opened_at(events: Events) -> datetime | None:
    start = _first_start(events)
    return start.timestamp if start else None


def plan_node(events: Events) -> tuple[str | None, str | None]:
    """The (plan, node) the session works on, or (None, None)."""
    start = _first_start(events)
    return (start.plan, start.node) if start else (None, None)


def _close(events: Events) -> EventRecord | None:
    """The session's close, or None while it is open (what follows a close — a forge's
    report, a usage report — leaves it closed)."""
    last = last_transition(events)
    return last if last is not None and last.type == CLOSE else None


def outcome(events: Events) -> str | None:
    """How the session ended: its close's outcome (absent means done); None while open."""
    close = _close(events)
    return None if close is None else close.outcome or DONE


def last_event_at(events: Events) -> datetime | None:
    return events[-1].timestamp if events else None


def closed_at(events: Events) -> datetime | None:
    """When the session was closed (its close's time, whatever follows it), or None."""
    close = _close(events)
    return None if close is None else close.timestamp


def last_transition(events: Events) -> EventRecord | None:
    """The last event that set the status, or None."""
    return next((event for event in reversed(events) if event.type in STATUS_AFTER), None)


def last_activity(events: Events) -> datetime | None:
    """When the session last did something: its last event that is neither a message
    nor a work report (a person writing to a silent session, or a forge reporting on its
    branch, does not make it look alive). None if none."""
    return next((e.timestamp for e in reversed(events) if e.type in ACTIVITY_TYPES), None)


def agent(events: Events) -> str | None:
    """The agent program whose hand last moved the session (the agent of its latest
    activity), or None when that was its actor in person, or nothing yet. A view's chosen
    events hold it: the latest transition, heartbeat and usage report are all chosen."""
    return next((e.agent for e in reversed(events) if e.type in ACTIVITY_TYPES), None)


class Progress(NamedTuple):
    note: str
    timestamp: datetime


def progress(events: Events) -> Progress | None:
    """The latest progress note and its time, or None: what the session is doing now."""
    return next(
        (Progress(e.note, e.timestamp) for e in reversed(events) if e.type == PROGRESS and e.note),
        None,
    )


def pending_messages(events: Events) -> list[EventRecord]:
    """The messages after the last progress, oldest first: a worker acknowledges what it
    has read with a progress event, and no other event acknowledges."""
    pending: list = []
    for event in events:
        if event.type == PROGRESS:
            pending = []
        elif event.type == MESSAGE:
            pending.append(event)
    return pending


def is_stale(events: Events, now: datetime, threshold: timedelta) -> bool:
    """Active, and quiet (no activity) for longer than `threshold` (a timedelta) at `now`."""
    last = last_activity(events) if status(events) == ACTIVE else None
    return last is not None and now - last > threshold


@dataclass(frozen=True)
class SessionView:
    """What every surface shows of a session."""

    id: str
    title: str | None
    owner: str | None
    status: str | None
    stale: bool
    agent: str | None = None  # the agent program whose hand last moved it (v5)
    blockers: list = field(default_factory=list)  # the latest open blocks, oldest first
    blocker_count: int = 0  # all the open blocks
    next_action: str | None = None
    next_action_block: datetime | None = None  # the block it comes from, if it does
    opened_at: datetime | None = None
    last_event_at: datetime | None = None
    closed_at: datetime | None = None
    seq: int = 0
    plan: str | None = None
    node: str | None = None
    outcome: str | None = None
    time_in_state: dict = field(default_factory=dict)  # whole seconds per status
    attention: "Attention | None" = None
    # What it was decided from (`domain.attention.Facts`): a page's duplicates decide again.
    attention_facts: object = field(default=None, compare=False, repr=False)
    last_activity: datetime | None = None
    progress: Progress | None = None
    messages: list = field(default_factory=list)  # the latest pending messages, oldest first
    message_count: int = 0  # all the pending messages
    work: object = None  # where the work lands (`domain.work.Work`), or None
    usage: object = None  # what it spent (`domain.spend.Usage`), or None
    budget: object = None  # the budget binding its node (`domain.budgets.Budget`), or None
    touched: list = field(default_factory=list)  # the paths it wrote, latest first
    touched_count: int = 0


def session_view(
    session_id: str,
    events: Events,
    now: datetime,
    thresholds: "Thresholds | None" = None,
    blocker_count: int | None = None,
    time_spent: dict[str, int] | None = None,
    message_count: int | None = None,
    lease: timedelta | None = None,
) -> SessionView:
    """All projections of one session's events at `now`, with `thresholds` (default:
    `Thresholds()`) and, for a session on a plan's node, its plan's `lease` in force
    (a timedelta, or None: nothing lapses).

    `events` may be the whole stream, or only the events the view depends on: the store
    reads those, with the open blocks' and pending messages' counts and the time spent
    in each status (which need the whole stream, summed in SQL), so that a view costs
    the same at any length.
    """
    events = list(events)
    thresholds = thresholds or Thresholds()
    open_blocks = blockers(events)
    pending = pending_messages(events)
    plan, node = plan_node(events)
    return SessionView(
        id=session_id,
        title=title(events),
        owner=owner(events),
        status=status(events),
        stale=is_stale(events, now, thresholds.stale),
        agent=agent(events),
        blockers=open_blocks[-MAX_BLOCKERS_SHOWN:],
        blocker_count=len(open_blocks) if blocker_count is None else blocker_count,
        next_action=next_action(events),
        next_action_block=next_action_block(events),
        opened_at=opened_at(events),
        last_event_at=last_event_at(events),
        closed_at=closed_at(events),
        seq=events[-1].seq if events else 0,
        plan=plan,
        node=node,
        outcome=outcome(events),
        time_in_state=time_in_state(events, now) if time_spent is None else time_spent,
        attention=attention(events, now, thresholds, lease) if events else None,
        last_activity=last_activity(events),
        progress=progress(events),
        messages=pending[-MAX_BLOCKERS_SHOWN:],
        message_count=len(pending) if message_count is None else message_count,
    )


class ViewEvents(NamedTuple):
    """The events a session's view depends on, with the counts that need the whole stream."""

    events: list
    open_blocks: int  # how many blocks are open
    pending_messages: int  # how many messages wait unacknowledged


# The types whose latest event a view depends on, whatever else it is.
_LATEST_OF_TYPE = frozenset({UNBLOCK, BLOCK, PROGRESS, WORK, USAGE})


def view_events(events: Events, shown: int = MAX_BLOCKERS_SHOWN) -> "ViewEvents":
    """The events a session's view depends on: first and last, the last transition,
    the latest note-bearing one, the latest unblock and block, the first and the latest
    `shown` blocks after that unblock (the first is where the blocked run began), the
    latest progress and the latest with a note or with paths, the latest work and usage
    reports, and the latest `shown` messages after that progress. `session_view` of
    these (with the counts and the time spent) is the view of the whole stream;
    `store.read_view_events` reads them in SQL. `events` oldest first: one pass, as an
    append works this out twice."""
    open_blocks: list[int] = []
    pending: list[int] = []
    latest: dict[str, int] = {}
    for event in events:
        kind, seq = event.type, event.seq
        if kind == UNBLOCK:
            open_blocks = []
        elif kind == BLOCK:
            open_blocks.append(seq)
        elif kind == PROGRESS:
            pending = []
            if event.note is not None:
                latest["progress note"] = seq
            if event.paths:
                latest["paths"] = seq  # whether it wrote any path
        elif kind == MESSAGE:
            pending.append(seq)
        if kind in _LATEST_OF_TYPE:
            latest[kind] = seq
        if kind in STATUS_AFTER:
            latest["transition"] = seq
        if note_of(event) is not None:
            latest["note"] = seq
    wanted = {1, events[-1].seq if events else 0, *latest.values()}
    wanted |= {*open_blocks[-shown:], *open_blocks[:1], *pending[-shown:]}
    return ViewEvents([e for e in events if e.seq in wanted], len(open_blocks), len(pending))


def view_events_after(
    chosen: "ViewEvents", event: EventRecord, shown: int = MAX_BLOCKERS_SHOWN
) -> "ViewEvents":
    """`view_events` of a stream with `event` appended, from the stream's own (`chosen`,
    a `ViewEvents`): what an append knows without reading the stream again."""
    events, _, _ = view_events([*chosen.events, event], shown)
    open_blocks = 0 if event.type == UNBLOCK else chosen.open_blocks + (event.type == BLOCK)
    pending = 0 if event.type == PROGRESS else chosen.pending_messages + (event.type == MESSAGE)
    return ViewEvents(events, open_blocks, pending)


# Time and attention ----------------------------------------------------------------

TIMED_STATUSES = (ACTIVE, BLOCKED, IN_REVIEW)


def time_in_state(events: Events, now: datetime) -> dict[str, int]:
    """Whole seconds spent active, blocked and in review: each transition's status lasts
    until the next transition (progress and messages leave it as it was), the last one
    until `now` (a closed session's last interval is not counted); summed, then rounded
    down."""
    totals = dict.fromkeys(TIMED_STATUSES, timedelta(0))
    transitions = [event for event in events if event.type in STATUS_AFTER]
    for event, following in zip(transitions, [*transitions[1:], None], strict=False):
        current = STATUS_AFTER[event.type]
        if current in totals:
            until = following.timestamp if following is not None else now
            totals[current] += max(until - event.timestamp, timedelta(0))
    return {status: int(total.total_seconds()) for status, total in totals.items()}


def time_in_state_from(
    spans: dict[str, int], last: EventRecord | None, now: datetime
) -> dict[str, int]:
    """`time_in_state` from the stream's spans between transitions, summed elsewhere (in
    SQL): `spans` maps an event type to the microseconds from each transition of that
    type to the next (progress and messages leave the status as it was, so a status
    lasts from one transition to the next); the last transition's span (`last`) runs to
    `now` unless it closed the session."""
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
LAPSED = "lapsed"


class Attention(NamedTuple):
    # stale, blocked_long, review_long, lapsed, over_budget, duplicate or checks_failed
    kind: str
    since: datetime  # when the overdue interval began
    other: str | None = None  # duplicate work: the earlier session on the same branch


def attention(
    events: Events,
    now: datetime,
    thresholds: "Thresholds" = Thresholds(),
    lease: timedelta | None = None,
) -> "Attention | None":
    """The one reason a person should look at the session now, or None. A session on a
    plan's node whose plan has a `lease` (a timedelta) has lapsed when it is active and
    its silence is longer than the lease: that takes the place of stale."""
    current = status(events)
    if current not in (ACTIVE, BLOCKED, IN_REVIEW):
        return None
    since = attention_since(current, events)
    if since is None:  # (a session with a status has the moment it began)
        return None
    if current == ACTIVE and is_lapsed(since, now, lease):
        return Attention(LAPSED, since)
    return overdue(current, since, now, thresholds)


def attention_since(current: str, events: Events) -> datetime | None:
    """When the interval a session in status `current` may be overdue for began: its
    last activity when active, the review when in review, the run's first block when
    blocked."""
    if current == ACTIVE:
        return last_activity(events)
    if current == BLOCKED:
        return _blocked_since(events)
    last = last_transition(events)
    return last.timestamp if last is not None else None


def is_lapsed(last_active: datetime | None, now: datetime, lease: timedelta | None) -> bool:
    """Whether an active node session silent since `last_active` has outlived its plan's
    `lease` at `now` (strictly; None: no lease, nothing lapses)."""
    return lease is not None and last_active is not None and now - last_active > lease


def has_lapsed(events: Events, now: datetime, lease: timedelta | None) -> bool:
    """Whether a node session (its events, or those its view depends on) has lapsed at
    `now` under its plan's `lease` (a timedelta, or None): active, and silent past it."""
    return status(events) == ACTIVE and is_lapsed(last_activity(events), now, lease)


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
    next_action_block: datetime | None  # the block it comes from, if it does


def attention_line(session_id: str, events: Events) -> "AttentionLine":
    """The strip's line of a session, from its events (or those its view depends on)."""
    open_blocks = blockers(events)
    blocker = open_blocks[-1].reason if open_blocks else None
    return AttentionLine(
        session_id,
        title(events),
        owner(events),
        blocker,
        next_action(events),
        next_action_block(events),
    )


def overdue(
    current: str, since: datetime, now: datetime, thresholds: "Thresholds"
) -> "Attention | None":
    """The attention a session in status `current` since `since` needs at `now`: when
    the interval is longer than its threshold (strictly), else None. `since` is the
    last event for active and in review, the run's first block for blocked."""
    if since < overdue_before(now, thresholds)[current]:
        return Attention(ATTENTION_OF[current][0], since)
    return None


def overdue_before(now: datetime, thresholds: "Thresholds") -> dict[str, datetime]:
    """For each status that can need attention, the moment before which a session in it
    since then needs attention at `now` (once for many sessions)."""
    return {current: now - threshold_of(current, thresholds) for current in ATTENTION_OF}


def threshold_of(current: str, thresholds: "Thresholds") -> timedelta:
    """How long a session may stay in status `current` before it needs attention."""
    return getattr(thresholds, ATTENTION_OF[current][1])


def _blocked_since(events: Events) -> datetime | None:
    """The first block of the unbroken blocked run the session is in (progress and
    messages do not break it)."""
    since = events[-1].timestamp
    for event in reversed(events):
        if event.type not in STATUS_AFTER:
            continue
        if STATUS_AFTER[event.type] != BLOCKED:
            break
        since = event.timestamp
    return since


def as_of(events: Events, at: datetime) -> list[EventRecord]:
    """The events of a stream that had happened by `at` (its history then)."""
    return [event for event in events if event.timestamp <= at]
