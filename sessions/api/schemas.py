"""The agent API's shapes, defined once: pydantic schemas that validate requests, write
the OpenAPI document and shape the JSON answers (and, later, the MCP tools' arguments).

Every limit comes from `vocabulary`, so a request the schema admits is one the rules
accept, unless the stream's state refuses it (403, 404, 409).
"""

from datetime import datetime
from typing import Annotated, Literal

from ninja import Schema
from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
)

from sessions.domain import jsonl, plans, projections, vocabulary
from sessions.domain.moments import moment
from sessions.readmodels.shapes import plain

_STRICT = ConfigDict(extra="forbid")


def text(max_length: int, kind: str = "line", **extra) -> object:
    """A text field of the vocabulary: non-blank, no control or invisible characters."""
    return Annotated[
        str,
        Field(
            min_length=1,
            max_length=max_length,
            pattern=vocabulary.text_pattern(kind),
            **extra,
        ),
    ]


SessionId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=vocabulary.SESSION_ID_MAX,
        pattern=f"^{vocabulary.SESSION_ID_PATTERN.pattern}$",
        description="1–64 of A–Z a–z 0–9 . _ -, not starting with . or -",
    ),
]
Title = text(vocabulary.MAX_LENGTH["title"])
Reason = text(vocabulary.MAX_LENGTH["reason"], "text")
Note = text(vocabulary.MAX_LENGTH["note"], "text")
IdempotencyKey = text(
    vocabulary.IDEMPOTENCY_KEY_MAX,
    description="A repeated key of the same actor on the same session returns the event "
    "it first appended and appends nothing.",
)


def json_integer(value: object) -> object:
    """JSON Schema's integer: 1 and 1.0, but not false, "1" or 1.5 (pydantic's lax mode
    would take the first two, its strict mode would refuse 1.0)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a whole number")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("must be a whole number")
        return int(value)
    return value


ExpectedSeq = Annotated[
    int,
    Field(
        ge=0,
        le=vocabulary.MAX_STREAM_EVENTS,
        description="The last seq you saw; if the stream moved on, the append is refused (409).",
    ),
    BeforeValidator(json_integer),
]
Timestamp = Annotated[
    datetime,
    PlainSerializer(jsonl.format_timestamp, return_type=str),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
Minutes = Annotated[int, Field(ge=0, le=vocabulary.MAX_MINUTES)]


def _optional(kind: str) -> object:
    """A field a type may leave out (never null when present)."""
    return Field(None, json_schema_extra={"type": kind})


# Requests ----------------------------------------------------------------------------


class StartSession(Schema):
    model_config = _STRICT
    id: SessionId | None = Field(None, description="Made by the server when absent.")
    title: Title | None = Field(
        None, description="Required, unless the session works on a plan's node (its title)."
    )
    note: Note | None = None
    plan: SessionId | None = Field(
        None, description="With `node`: the session works on that node of this build plan."
    )
    node: SessionId | None = Field(None, description="With `plan`: the node's key.")


class BlockEvent(Schema):
    model_config = _STRICT
    type: Literal["session_block"]
    reason: Reason
    expected_seq: ExpectedSeq | None = None


class UnblockEvent(Schema):
    model_config = _STRICT
    type: Literal["session_unblock"]
    note: Note | None = None
    expected_seq: ExpectedSeq | None = None


class ReviewEvent(Schema):
    model_config = _STRICT
    type: Literal["session_review"]
    note: Note | None = None
    expected_seq: ExpectedSeq | None = None


class CloseEvent(Schema):
    model_config = _STRICT
    type: Literal["session_close"]
    note: Note | None = None
    outcome: Literal[vocabulary.OUTCOMES] | None = Field(  # type: ignore[valid-type]
        None,
        description="How the work ended (default done); a plan's node states read it."
        " `lapsed` releases a lapsed node (the plan's owner or a lead only).",
    )
    expected_seq: ExpectedSeq | None = None


class ProgressEvent(Schema):
    """A heartbeat: the status stays. Sent with `expected_seq`, it acknowledges the
    pending messages the worker has read, and fails if another arrived meanwhile."""

    model_config = _STRICT
    type: Literal["session_progress"]
    note: Note | None = Field(None, description="What the session is doing now.")
    expected_seq: ExpectedSeq | None = None


class MessageEvent(Schema):
    """A person's words to the session's worker: the status stays."""

    model_config = _STRICT
    type: Literal["session_message"]
    note: Note
    expected_seq: ExpectedSeq | None = None


AppendEvent = Annotated[
    BlockEvent | UnblockEvent | ReviewEvent | CloseEvent | ProgressEvent | MessageEvent,
    Field(discriminator="type"),
]


class Thresholds(Schema):
    """Per-request attention thresholds, in minutes (default: the server's settings)."""

    model_config = _STRICT
    stale_after: Minutes | None = Field(None, description="Active and quiet this long: stale.")
    blocked_after: Minutes | None = Field(
        None, description="Blocked without a break this long: needs attention."
    )
    review_after: Minutes | None = Field(None, description="In review this long: needs attention.")


AsOf = Annotated[
    datetime,
    Field(description="View it as it was at this moment (ISO 8601 with a UTC offset)."),
    BeforeValidator(moment),
]


class ViewOptions(Thresholds):
    at: AsOf | None = None


class PlanOptions(Schema):
    model_config = _STRICT
    at: AsOf | None = None


class MetricsWindow(Schema):
    model_config = _STRICT
    since: AsOf | None = Field(None, description="Start of the window (default: 14 days ago).")
    until: AsOf | None = Field(None, description="End of the window, excluded (default: now).")


class PlanNode(Schema):
    model_config = _STRICT
    key: SessionId
    title: Title
    needs: list[SessionId] | None = Field(
        None,
        max_length=vocabulary.MAX_PLAN_NODES,
        description="The keys of the nodes this one needs done before it can start.",
        json_schema_extra={"uniqueItems": True},
    )


class Need(Schema):
    """An edge: `node` needs `needs` done first."""

    model_config = _STRICT
    node: SessionId
    needs: SessionId


Nodes = Annotated[list[PlanNode], Field(min_length=1, max_length=vocabulary.MAX_PLAN_NODES)]
Needs = Annotated[list[Need], Field(min_length=1, max_length=vocabulary.MAX_PLAN_EDGES)]


def _in_range(name: str, description: str) -> object:
    """A plan's liveness setting: a JSON integer (never a boolean) in its range."""
    low, high = vocabulary.INTEGER_RANGES[name]
    return Annotated[int, Field(strict=True, ge=low, le=high, description=description)]


Lease = _in_range("lease", "Minutes of silence a node's active session may keep before it lapses.")
MaxAttempts = _in_range(
    "max_attempts", "Sessions a node may have had before a lapsed one is no longer reclaimed."
)


class CreatePlan(Schema):
    model_config = _STRICT
    id: SessionId | None = Field(None, description="Made by the server when absent.")
    title: Title
    note: Note | None = None
    nodes: Nodes
    lease: Lease | None = Field(None, description="Default: the server's LEASE_MINUTES.")
    max_attempts: MaxAttempts | None = Field(
        None, description="Default: the server's MAX_ATTEMPTS."
    )


class AmendPlan(Schema):
    """Applied in order: add `nodes`, drop `drop_needs`, add `needs`, retire `retire`.
    At least one of the four."""

    model_config = _STRICT
    type: Literal["plan_amend"]
    note: Note | None = None
    nodes: Nodes | None = None
    needs: Needs | None = None
    drop_needs: Needs | None = None
    retire: (
        Annotated[list[SessionId], Field(min_length=1, max_length=vocabulary.MAX_PLAN_NODES)] | None
    ) = None
    lease: Lease = _optional("integer")
    max_attempts: MaxAttempts = _optional("integer")
    expected_seq: ExpectedSeq | None = None


class Claim(Schema):
    """An empty object: the server picks the first ready or reclaimable node."""

    model_config = _STRICT


class PlanPage(Schema):
    model_config = _STRICT
    at: AsOf | None = None
    page: Annotated[int, Field(ge=1, le=vocabulary.MAX_PAGE)] = 1
    page_size: Annotated[int, Field(ge=1, le=vocabulary.MAX_PLAN_PAGE_SIZE)] = (
        vocabulary.MAX_PLAN_PAGE_SIZE
    )


class SessionFilters(Thresholds):
    status: Literal[vocabulary.STATUSES] | None = None  # type: ignore[valid-type]
    owner: Annotated[str, Field(max_length=vocabulary.ACTOR_MAX, pattern=r"^[^\u0000]*$")] = ""
    q: Annotated[str, Field(max_length=200, pattern=r"^[^\u0000]*$")] = Field(
        "", description="Text in the title or id."
    )
    stale: bool | None = None
    page: Annotated[int, Field(ge=1, le=vocabulary.MAX_PAGE)] = 1
    page_size: Annotated[int, Field(ge=1, le=vocabulary.MAX_PAGE_SIZE)] = (
        vocabulary.DEFAULT_PAGE_SIZE
    )
    attention: bool | None = Field(
        None, description="true: only the sessions that need a person now (see `attention`)."
    )
    at: AsOf | None = None


class EventPage(Schema):
    model_config = _STRICT
    after: Annotated[int, Field(ge=0, le=vocabulary.MAX_STREAM_EVENTS)] = Field(
        0, description="Give the events with a seq above this one."
    )
    limit: Annotated[int, Field(ge=1, le=vocabulary.MAX_EVENTS_PAGE)] = vocabulary.MAX_EVENTS_PAGE


class FeedQuery(Schema):
    model_config = _STRICT
    after: Annotated[int, Field(ge=0, le=2**63 - 1)] = Field(
        0, description="Give the events with a position above this one (the last next_after)."
    )
    limit: Annotated[int, Field(ge=0, le=vocabulary.MAX_FEED_PAGE)] = Field(
        vocabulary.DEFAULT_FEED_PAGE,
        description="At most this many events; 0 gives none and next_after at the newest"
        " safe position: where to follow from now on.",
    )
    type: Literal[vocabulary.ALL_EVENT_TYPES] | None = Field(  # type: ignore[valid-type]
        None, description="Only events of this type."
    )
    stream: SessionId | None = Field(None, description="Only this session's or plan's events.")
    plan: SessionId | None = Field(
        None, description="Only this plan's events and those of the sessions on its nodes."
    )


# Answers ------------------------------------------------------------------------------


class Blocker(Schema):
    reason: str
    timestamp: Timestamp
    actor: str
    seq: int


class TimeInState(Schema):
    active: int
    blocked: int
    in_review: int


class Attention(Schema):
    kind: Literal["stale", "blocked_long", "review_long", "lapsed"]
    since: Timestamp


class SessionProgress(Schema):
    note: str
    timestamp: Timestamp


class Message(Schema):
    note: str
    actor: str
    timestamp: Timestamp
    seq: int


class Session(Schema):
    id: str
    title: str | None
    owner: str | None
    status: Literal[vocabulary.STATUSES] | None  # type: ignore[valid-type]
    stale: bool
    blockers: list[Blocker] = Field(
        description=f"The open blocks, oldest first: the latest {vocabulary.MAX_BLOCKERS_SHOWN} "
        "when there are more (`blocker_count` has them all)."
    )
    blocker_count: int
    next_action: str | None
    opened_at: Timestamp | None
    last_event_at: Timestamp | None
    closed_at: Timestamp | None
    seq: int
    plan: str | None = Field(description="The build plan whose node this session works on.")
    node: str | None
    outcome: Literal[vocabulary.OUTCOMES] | None = Field(  # type: ignore[valid-type]
        description="How it ended; null until closed."
    )
    time_in_state: TimeInState = Field(description="Whole seconds spent in each status.")
    attention: Attention | None = Field(
        description="Why a person should look now (and since when), or null."
    )
    progress: SessionProgress | None = Field(
        description="The latest progress note and its time, or null."
    )
    messages: list[Message] = Field(
        description="The messages its worker has not acknowledged, oldest first: the latest "
        f"{vocabulary.MAX_BLOCKERS_SHOWN} when there are more (`message_count` has them all)."
    )
    message_count: int


class Event(Schema):
    """A session's event in the JSONL key order; absent optional fields are left out."""

    session: str
    seq: int
    type: Literal[vocabulary.EVENT_TYPES]  # type: ignore[valid-type]
    timestamp: Timestamp
    actor: str
    title: str | None = _optional("string")
    reason: str | None = _optional("string")
    note: str | None = _optional("string")
    plan: str | None = _optional("string")
    node: str | None = _optional("string")
    outcome: str | None = _optional("string")


class PlanEvent(Schema):
    """A plan's event in the JSONL key order; absent optional fields are left out."""

    plan: str
    seq: int
    type: Literal[vocabulary.PLAN_EVENT_TYPES]  # type: ignore[valid-type]
    timestamp: Timestamp
    actor: str
    title: str | None = _optional("string")
    note: str | None = _optional("string")
    nodes: list[PlanNode] | None = _optional("array")
    needs: list[Need] | None = _optional("array")
    drop_needs: list[Need] | None = _optional("array")
    retire: list[str] | None = _optional("array")
    lease: int | None = _optional("integer")
    max_attempts: int | None = _optional("integer")


class Progress(Schema):
    done: int
    total: int


class LastAttempt(Schema):
    session: str
    outcome: Literal[vocabulary.OUTCOMES]  # type: ignore[valid-type]
    note: str | None = Field(description="Its next action: why it ended.")
    progress: str | None = Field(description="Its latest progress note: what it was doing.")


class NodeState(Schema):
    key: str
    title: str
    needs: list[str]
    state: Literal[plans.NODE_STATES]  # type: ignore[valid-type]
    session: str | None = Field(description="The unclosed session of a running or lapsed node.")
    attempts: int = Field(description="Sessions ever started on it.")
    last_attempt: LastAttempt | None = Field(
        description="Its latest closed session: the handoff the next worker reads."
    )


class Plan(Schema):
    id: str
    title: str | None
    owner: str | None
    note: str | None
    status: Literal[plans.PLAN_STATUSES]  # type: ignore[valid-type]
    progress: Progress
    counts: dict[str, int] = Field(description="Nodes per state; zero counts are left out.")
    ready: list[str] = Field(description="Ready nodes, the one unlocking the most first.")
    critical_path: list[str] = Field(description="The longest chain left, first-to-do first.")
    seq: int
    created_at: Timestamp | None
    last_event_at: Timestamp | None
    nodes: list[NodeState] = Field(description="In plan order.")
    lease: int | None = Field(description="Minutes; null: nothing of this plan lapses.")
    max_attempts: int | None = Field(description="null: no cap on reclaims.")
    lapsed: list[str] = Field(description="Lapsed nodes, in the ready list's order.")


class Percentiles(Schema):
    p50: int | None
    p85: int | None
    max: int | None


class Metrics(Schema):
    since: Timestamp
    until: Timestamp
    throughput: dict[str, dict[str, int]] = Field(
        description="Per UTC day: sessions closed, by outcome (zero counts left out)."
    )
    cycle_time: Percentiles = Field(description="Opened to closed, whole seconds.")
    blocked_time: Percentiles
    review_time: Percentiles
    flow: dict[str, dict[str, int]] = Field(
        description="Per UTC midnight in the window: sessions per status as of then."
    )


class FeedSessionEvent(Event):
    position: int = Field(description="The event's place in the global order.")


class FeedPlanEvent(PlanEvent):
    position: int = Field(description="The event's place in the global order.")


class FeedPage(Schema):
    items: list[FeedSessionEvent | FeedPlanEvent]
    next_after: int = Field(
        description="Ask again with after=this: nothing is missed. A page holds at most"
        " `limit` events and about a million characters of their text; a page cut short by"
        " either ends at its last event."
    )


class PlanAppended(Schema):
    event: PlanEvent
    plan: Plan


class PlanList(Schema):
    items: list[Plan]
    next: str | None


class Appended(Schema):
    event: Event
    session: Session
    position: int = Field(
        description="The event's place in the feed: follow the feed from here (`after`) to"
        " see what comes next, missing nothing."
    )


class Me(Schema):
    username: str = Field(description="The user the request acts as: sessions' `owner`.")


class Claimed(Session):
    last_attempt: LastAttempt | None = Field(
        description="The claimed node's last attempt: the previous worker's handoff."
    )


class SessionList(Schema):
    items: list[Session]
    next: str | None


class EventList(Schema):
    items: list[Event]
    next: str | None


class Error(Schema):
    error: str
    detail: str
    fields: dict[str, str] | None = Field(None, json_schema_extra={"type": "object"})
    session: Session | None = None
    plan: Plan | None = None


def _blockers_json(view: projections.SessionView) -> list[dict]:
    return [{name: plain(getattr(b, name)) for name in Blocker.model_fields} for b in view.blockers]


def session_json(view: projections.SessionView) -> dict:
    """A `projections.SessionView` as the `Session` schema gives it, field for field.

    Read straight off the view by the schema's own field list: validating the view
    through pydantic cost a sixth of an append request (bench/RESULTS.md)."""
    shaped = {name: plain(getattr(view, name)) for name in Session.model_fields}
    shaped["blockers"] = _blockers_json(view)
    if view.attention is not None:
        shaped["attention"] = {"kind": view.attention.kind, "since": plain(view.attention.since)}
    if view.progress is not None:
        progress = view.progress
        shaped["progress"] = {"note": progress.note, "timestamp": plain(progress.timestamp)}
    shaped["messages"] = [
        {"note": m.note, "actor": m.actor, "timestamp": plain(m.timestamp), "seq": m.seq}
        for m in view.messages
    ]
    return shaped


def plan_json(view: plans.PlanView) -> dict:
    """A `plans.PlanView` as the `Plan` schema gives it."""
    return {
        "id": view.id,
        "title": view.title,
        "owner": view.owner,
        "note": view.note,
        "status": view.status,
        "progress": {"done": view.done, "total": view.total},
        "counts": view.counts,
        "ready": view.ready,
        "critical_path": view.critical_path,
        "seq": view.seq,
        "created_at": plain(view.created_at),
        "last_event_at": plain(view.last_event_at),
        "nodes": [
            {
                "key": node.key,
                "title": node.title,
                "needs": list(node.needs),
                "state": node.state,
                "session": node.session,
                "attempts": node.attempts,
                "last_attempt": attempt_json(node.last_attempt),
            }
            for node in view.nodes
        ],
        "lease": view.lease,
        "max_attempts": view.max_attempts,
        "lapsed": view.lapsed,
    }


def attempt_json(attempt: plans.Attempt | None) -> dict | None:
    """A node's last attempt (`plans.Attempt`) as the `LastAttempt` schema gives it."""
    return None if attempt is None else attempt._asdict()
