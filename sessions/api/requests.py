"""The agent API's requests, defined once: pydantic schemas that validate each body and
query, write the OpenAPI document and the MCP tools' arguments. The answers' shapes are
`answers`'.

Every limit comes from `vocabulary`, so a request the schema admits is one the rules
accept, unless the stream's state refuses it (403, 404, 409).
"""

from datetime import datetime
from typing import Annotated, Literal

from ninja import Schema
from pydantic import (
    BeforeValidator,
    Field,
    PlainSerializer,
    WithJsonSchema,
)

from sessions.api.request_fields import STRICT, Budget, Path, Patterns, Repo
from sessions.domain import jsonl, vocabulary
from sessions.domain import paths as space
from sessions.domain.moments import moment

_STRICT = STRICT


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
Brief = text(
    vocabulary.BRIEF_MAX,
    "text",
    description="The text an agent is given to do the node (tab and newline allowed).",
)
AgentName = text(
    vocabulary.AGENT_MAX,
    description="Which agent program appends this for you, with its version "
    "(`codex 0.169.0`); left out when a person acts in person.",
)
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


def optional_field(kind: str) -> object:
    """A field a type may leave out (never null when present)."""
    return Field(None, json_schema_extra={"type": kind})


# Requests ----------------------------------------------------------------------------


class ByAgent(Schema):
    """A session event's body: it may say which agent appends it (v5)."""

    model_config = _STRICT
    agent: AgentName | None = None


class StartSession(ByAgent):
    id: SessionId | None = Field(None, description="Made by the server when absent.")
    title: Title | None = Field(
        None, description="Required, unless the session works on a plan's node (its title)."
    )
    note: Note | None = None
    plan: SessionId | None = Field(
        None, description="With `node`: the session works on that node of this build plan."
    )
    node: SessionId | None = Field(None, description="With `plan`: the node's key.")


class BlockEvent(ByAgent):
    type: Literal["session_block"]
    reason: Reason
    expected_seq: ExpectedSeq | None = None


class UnblockEvent(ByAgent):
    type: Literal["session_unblock"]
    note: Note | None = None
    expected_seq: ExpectedSeq | None = None


class ReviewEvent(ByAgent):
    type: Literal["session_review"]
    note: Note | None = None
    expected_seq: ExpectedSeq | None = None


class CloseEvent(ByAgent):
    type: Literal["session_close"]
    note: Note | None = None
    outcome: Literal[vocabulary.OUTCOMES] | None = Field(  # type: ignore[valid-type]
        None,
        description="How the work ended (default done); a plan's node states read it."
        " `lapsed` releases a lapsed node (the plan's owner or a lead only).",
    )
    expected_seq: ExpectedSeq | None = None


class ProgressEvent(ByAgent):
    """A heartbeat: the status stays. Sent with `expected_seq`, it acknowledges the
    pending messages the worker has read, and fails if another arrived meanwhile."""

    type: Literal["session_progress"]
    note: Note | None = Field(None, description="What the session is doing now.")
    paths: Annotated[list[Path], Field(min_length=1, max_length=space.PATHS_MAX)] | None = Field(
        None, description="The repo-relative paths written since the last report."
    )
    expected_seq: ExpectedSeq | None = None


class MessageEvent(ByAgent):
    """A person's words to the session's worker: the status stays."""

    type: Literal["session_message"]
    note: Note
    expected_seq: ExpectedSeq | None = None


def _work_field(kind: str, description: str, **rules) -> object:
    """A `session_work` field: optional, never null when present (a value is replaced,
    never cleared)."""
    return Field(None, description=description, json_schema_extra={"type": kind}, **rules)


class WorkEvent(ByAgent):
    """Where the work lands: the status stays, and it is not activity. Any status, a
    closed session's included. At least one field; `check` and `check_state` together,
    with the `commit` they ran on; `pr_url` and `pr_state` with a `pr`, here or reported
    before. `pr_state: merged` on a session not yet closed closes it (done) in the same
    transaction: its worker is fenced."""

    type: Literal["session_work"]
    repo: str = _work_field(
        "string",
        "owner/name",
        max_length=vocabulary.REPO_MAX,
        pattern=f"^{vocabulary.REPO_PATTERN.pattern}$",
    )
    branch: str = _work_field(
        "string",
        "A git branch name, without refs/heads/.",
        min_length=1,
        max_length=vocabulary.BRANCH_MAX,
    )
    commit: str = _work_field(
        "string", "A full commit id.", pattern=f"^{vocabulary.COMMIT_PATTERN.pattern}$"
    )
    pr: int = _work_field(
        "integer", "The pull request's number.", ge=1, le=vocabulary.PR_MAX, strict=True
    )
    pr_url: str = _work_field(
        "string", "The pull request's page (http or https).", max_length=vocabulary.PR_URL_MAX
    )
    pr_state: Literal[vocabulary.PR_STATES] = _work_field("string", "open, merged or closed")  # type: ignore[valid-type]
    check: str = _work_field(
        "string",
        "A check's name; `commit` names the commit it ran on.",
        min_length=1,
        max_length=vocabulary.CHECK_MAX,
        pattern=vocabulary.text_pattern("line"),
    )
    check_state: Literal[vocabulary.CHECK_STATES] = _work_field(
        "string", "pending, success or failure"
    )  # type: ignore[valid-type]
    expected_seq: ExpectedSeq | None = None


def _tokens(description: str) -> object:
    return Field(description=description, ge=0, le=vocabulary.TOKENS_MAX, strict=True)


class UsageEvent(ByAgent):
    """What the session spent on one model: its totals so far, not increments (a report
    sent twice, or late, changes nothing). The status stays; it is activity. Any status,
    a closed session's included."""

    type: Literal["session_usage"]
    model: str = Field(
        description="The model's id, as the agent reports it (a price table entry prices it "
        "and its dated ids).",
        min_length=1,
        max_length=vocabulary.MODEL_MAX,
        pattern=vocabulary.text_pattern("line"),
    )
    input_tokens: int = _tokens("Input tokens so far.")
    output_tokens: int = _tokens("Output tokens so far.")
    cache_read_tokens: int = _tokens("Tokens read from the prompt cache so far.")
    cache_write_tokens: int = _tokens("Tokens written to the prompt cache so far.")
    expected_seq: ExpectedSeq | None = None


AppendEvent = Annotated[
    BlockEvent
    | UnblockEvent
    | ReviewEvent
    | CloseEvent
    | ProgressEvent
    | MessageEvent
    | WorkEvent
    | UsageEvent,
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


def _node_map(value: object) -> object:
    """An amend's `{key: value or null}`, naming at least one node."""
    return Annotated[
        dict[SessionId, value | None],
        Field(min_length=1, max_length=vocabulary.MAX_PLAN_NODES),
    ]


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
    paths: Patterns | None = None
    budget_usd: Budget | None = Field(None, description="US dollars it may spend, all attempts.")
    brief: Brief | None = None


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


DoneWhen = Literal[vocabulary.DONE_WHEN]  # type: ignore[valid-type]


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
    done_when: DoneWhen | None = Field(
        None,
        description="What makes a node done: its session's close (the default) or its"
        " pull request's merge.",
    )
    repo: Repo | None = Field(None, description="The repository its nodes' paths are in.")
    budget_usd: Budget | None = Field(None, description="US dollars its nodes may spend in all.")


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
    lease: Lease = optional_field("integer")
    max_attempts: MaxAttempts = optional_field("integer")
    done_when: DoneWhen = optional_field("string")
    repo: Repo = optional_field("string")
    budget_usd: Budget | None = Field(None, description="null: the plan's budget removed.")
    budgets: (
        Annotated[dict[SessionId, Budget | None], Field(min_length=1, max_length=500)] | None
    ) = Field(None, description="Node key → its new budget, or null to remove it.")
    paths: (
        Annotated[dict[SessionId, Patterns | None], Field(min_length=1, max_length=500)] | None
    ) = Field(None, description="Node key → its new path patterns, or null for none.")
    briefs: Annotated[dict[SessionId, Brief | None], Field(min_length=1, max_length=500)] | None = (
        Field(None, description="Node key → its new brief, or null to remove it.")
    )
    expected_seq: ExpectedSeq | None = None


class Claim(ByAgent):
    """The server picks the first ready or reclaimable node; `agent` goes on the start of
    the session it claims."""


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
    wait: Annotated[float, Field(ge=0, le=vocabulary.MAX_FEED_WAIT_SECONDS)] = Field(
        0,
        description="With no event to give yet, wait up to this many seconds for one (a"
        " long poll): the answer comes as soon as one is committed. 0 answers at once. A"
        " busy server may answer sooner, with no events: ask again.",
    )
