"""What an append is made of, and what it answers: the parameter objects of `append`'s
functions, so that an append travels as one value instead of a run of positionals."""

from dataclasses import dataclass
from datetime import datetime

from sessions.domain import plans, projections
from sessions.domain.records import EventRecord
from sessions.readmodels import plan_sessions
from sessions.rules.permissions import User


@dataclass(frozen=True)
class Append:
    """One event asked of a stream, with the checks its caller asks for."""

    stream_id: str
    event_type: str
    fields: dict  # the type's own fields, checked (None for an absent optional one)
    user: User
    expected_seq: int | None = None  # the last seq the caller saw: a conflict if moved
    idempotency_key: str | None = None  # a repeat of the actor's key answers the first
    now: datetime | None = None  # None: the clock's


@dataclass(frozen=True)
class HowMade:
    """What the caller already knows of an append, so that it is not read again."""

    # The plan's graph and node states, when the caller has just worked them out (a
    # claim), so that a start on a node does so once.
    plan: tuple[plans.Graph, plan_sessions.Found] | None = None
    # The stream's id was just made (a claim's): there is nothing to read of it (were it
    # taken after all, the insert fails and the caller tries again).
    fresh: bool = False
    # A reclaim's close of a lapsed session: the one append a user may make to a session
    # not theirs without the act-on-any-session permission.
    reclaiming: bool = False
    # The stream's view events, when the caller has just read them under its lock.
    view_events: projections.ViewEvents | None = None


@dataclass(frozen=True)
class Appended:
    event: EventRecord
    created: bool  # False when an idempotency key repeated an earlier append
    previous: EventRecord | None = None  # the stream's last event before a new one
    # A new event's stream: the events its view now depends on, with its counts
    # (`projections.view_events`), so that an answer need not read them again.
    view_events: projections.ViewEvents | None = None
    # A claim's node's last attempt before it (the previous worker's handoff); None for
    # other appends, and for a claim of a node never tried.
    last_attempt: plans.Attempt | None = None
    # A new event's place in the global order (the feed's position); None when an
    # idempotency key repeated an earlier append.
    position: int | None = None
    # The close a merged pull request's report appended after it, in the same transaction.
    merge_close: EventRecord | None = None
    brief: str | None = None  # a claim's node's brief (what its agent is given to do)
