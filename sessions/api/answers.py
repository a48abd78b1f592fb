"""The agent API's answers, defined once: the pydantic schemas of its JSON answers (for
the OpenAPI document) and the functions that shape a view into one."""

import operator
from collections.abc import Iterable
from typing import Literal

from ninja import Schema
from pydantic import (
    Field,
    create_model,
)

from sessions.api.answer_fields import Budget, Usage, Work, budget_json, usage_json, work_json
from sessions.api.requests import (
    Need,
    PlanNode,
    Timestamp,
    optional_field,
)
from sessions.domain import jsonl, plans, projections, vocabulary
from sessions.domain.records import EventRecord
from sessions.readmodels.shapes import plain


class Blocker(Schema):
    reason: str
    timestamp: Timestamp
    actor: str
    seq: int


class TimeInState(Schema):
    active: int
    blocked: int
    in_review: int


# `with` is a Python keyword: the schema names its field by the answer's own word.
Attention = create_model(
    "Attention",
    __base__=Schema,
    kind=(
        Literal[
            "stale",
            "blocked_long",
            "review_long",
            "lapsed",
            "over_budget",
            "duplicate",
            "checks_failed",
        ],
        ...,
    ),
    since=(Timestamp, ...),
    **{
        "with": (
            str,
            Field(
                None,
                json_schema_extra={"type": "string"},
                description="duplicate: the earlier session on the same branch.",
            ),
        )
    },
)


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
    agent: str | None = Field(
        description="The agent program, with its version, whose hand last moved it (its "
        "latest activity); null when the owner acted in person."
    )
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
    last_activity: Timestamp | None = Field(
        description="What staleness and leases count from: the last event that is neither "
        "a message nor a work report (`last_event_at` is any event's)."
    )
    work: Work | None = Field(
        description="Where the work lands: repo, branch, head commit, pull request and the "
        "checks at the head; null when nothing was reported."
    )
    usage: Usage | None = Field(
        description="What it spent: tokens per model (each its largest report) and their "
        "cost from the price table; null when nothing was reported."
    )
    touched: list[str] = Field(
        description="The paths it reported writing, distinct, most recent first (at most 200)."
    )
    touched_count: int = Field(description="How many distinct paths it reported writing.")
    budget: Budget | None = Field(
        description="The budget that binds its node: the node's when spent, else the plan's "
        "when spent, else the node's own, else the plan's; null when neither has one."
    )


class Event(Schema):
    """A session's event in the JSONL key order; absent optional fields are left out."""

    session: str
    seq: int
    type: Literal[vocabulary.EVENT_TYPES]  # type: ignore[valid-type]
    timestamp: Timestamp
    actor: str
    agent: str | None = optional_field("string")
    title: str | None = optional_field("string")
    reason: str | None = optional_field("string")
    note: str | None = optional_field("string")
    plan: str | None = optional_field("string")
    node: str | None = optional_field("string")
    outcome: str | None = optional_field("string")
    repo: str | None = optional_field("string")
    branch: str | None = optional_field("string")
    commit: str | None = optional_field("string")
    pr: int | None = optional_field("integer")
    pr_url: str | None = optional_field("string")
    pr_state: str | None = optional_field("string")
    check: str | None = optional_field("string")
    check_state: str | None = optional_field("string")
    model: str | None = optional_field("string")
    input_tokens: int | None = optional_field("integer")
    output_tokens: int | None = optional_field("integer")
    cache_read_tokens: int | None = optional_field("integer")
    cache_write_tokens: int | None = optional_field("integer")
    paths: list[str] | None = optional_field("array")


class PlanEvent(Schema):
    """A plan's event in the JSONL key order; absent optional fields are left out."""

    plan: str
    seq: int
    type: Literal[vocabulary.PLAN_EVENT_TYPES]  # type: ignore[valid-type]
    timestamp: Timestamp
    actor: str
    title: str | None = optional_field("string")
    note: str | None = optional_field("string")
    nodes: list[PlanNode] | None = optional_field("array")
    needs: list[Need] | None = optional_field("array")
    drop_needs: list[Need] | None = optional_field("array")
    retire: list[str] | None = optional_field("array")
    lease: int | None = optional_field("integer")
    max_attempts: int | None = optional_field("integer")
    done_when: str | None = optional_field("string")
    repo: str | None = optional_field("string")
    budget_usd: float | None = Field(
        None, description="US dollars; null in an amend: the plan's budget removed."
    )
    budgets: dict[str, float | None] | None = optional_field("object")
    paths: dict[str, list[str] | None] | None = optional_field("object")


class Progress(Schema):
    done: int
    total: int


class LastAttempt(Schema):
    session: str
    outcome: Literal[vocabulary.OUTCOMES]  # type: ignore[valid-type]
    note: str | None = Field(description="Its next action: why it ended.")
    progress: str | None = Field(description="Its latest progress note: what it was doing.")
    work: Work | None = Field(
        description="Where its work landed, as it is now (a forge reports after a close): "
        "the next worker continues its branch and pull request."
    )
    messages: list[Message] = Field(
        description="The people's messages its worker never acknowledged, oldest first (the "
        f"latest {vocabulary.MAX_BLOCKERS_SHOWN}): words meant for whoever works the node."
    )


class NodeState(Schema):
    key: str
    title: str
    needs: list[str]
    state: Literal[plans.NODE_STATES]  # type: ignore[valid-type]
    session: str | None = Field(
        description="The unclosed session of a running or lapsed node; a merging node's latest."
    )
    attempts: int = Field(description="Sessions ever started on it.")
    last_attempt: LastAttempt | None = Field(
        description="Its latest closed session: the handoff the next worker reads."
    )
    usage: Usage | None = Field(
        description="What every session ever started on it spent (all attempts); null: "
        "nothing reported."
    )
    paths: list[str] = Field(description="The path patterns it will touch in the plan's repo.")
    budget_usd: float | None = Field(description="US dollars it may spend, all attempts.")
    overlaps: list[str] = Field(
        description="A ready or reclaimable node's: the running nodes whose paths may overlap"
        " its own, in plan order (it goes after the nodes that overlap none)."
    )
    brief: str | None = Field(description="The text an agent is given to do it; null: none.")


class PlanSummary(Schema):
    id: str
    title: str | None
    owner: str | None
    note: str | None
    status: Literal[plans.PLAN_STATUSES]  # type: ignore[valid-type]
    progress: Progress
    counts: dict[str, int] = Field(description="Nodes per state; zero counts are left out.")
    seq: int
    created_at: Timestamp | None
    last_event_at: Timestamp | None
    done_when: Literal[vocabulary.DONE_WHEN] = Field(  # type: ignore[valid-type]
        description="What makes a node done: its session's close, or its pull request's merge"
        " (a node closed done and not yet merged is `merging`)."
    )
    usage: Usage | None = Field(
        description="What its nodes spent, retired ones included; null: nothing reported."
    )
    repo: str | None = Field(description="The repository its nodes' paths are in.")
    budget_usd: float | None = Field(description="US dollars its nodes may spend in all.")


class Plan(PlanSummary):
    ready: list[str] = Field(description="Ready nodes, the one unlocking the most first.")
    critical_path: list[str] = Field(description="The longest chain left, first-to-do first.")
    nodes: list[NodeState] = Field(description="In plan order.")
    lease: int | None = Field(description="Minutes; null: nothing of this plan lapses.")
    max_attempts: int | None = Field(description="null: no cap on reclaims.")
    lapsed: list[str] = Field(description="Lapsed nodes, in the ready list's order.")
    claimable: list[str] = Field(
        description="What claim-next takes, in order: the ready nodes and the reclaimable "
        "lapsed ones."
    )


class Percentiles(Schema):
    p50: int | None
    p85: int | None
    max: int | None


class Spend(Schema):
    by_day: dict[str, float] = Field(description="Per UTC day (days with none left out).")
    by_owner: dict[str, float]
    by_agent: dict[str, float] = Field(
        description="Per program of the agent that started the session (`codex`, "
        "`claude-code`); `unnamed` for a session that names none."
    )


class Metrics(Schema):
    since: Timestamp
    until: Timestamp
    throughput: dict[str, dict[str, int]] = Field(
        description="Per UTC day: sessions closed, by outcome (zero counts left out)."
    )
    throughput_by_agent: dict[str, dict[str, int]] = Field(
        description="Per program of the agent that started the session (`codex`; "
        "`unnamed` for none): sessions closed in the window, by outcome."
    )
    cycle_time: Percentiles = Field(description="Opened to closed, whole seconds.")
    blocked_time: Percentiles
    review_time: Percentiles
    flow: dict[str, dict[str, int]] = Field(
        description="Per UTC midnight in the window: sessions per status as of then."
    )
    spend: Spend = Field(
        description="US dollars: each session's cost, counted on the UTC day of its latest "
        "usage report in the window, and for its owner."
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
    items: list[PlanSummary] = Field(
        description="Each plan's progress; its nodes, ready list and overlaps are in its own"
        " view (`GET /api/plans/<id>`)."
    )
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
    brief: str | None = Field(description="The claimed node's brief: what to do; null: none.")


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


_SESSION_FIELDS = tuple(Session.model_fields)
_session_values = operator.attrgetter(*_SESSION_FIELDS)
# The schema's moments; its other fields are sent as the view holds them, or shaped below.
_SESSION_MOMENTS = tuple(
    name for name, field in Session.model_fields.items() if field.annotation == Timestamp | None
)


def session_json(view: projections.SessionView) -> dict:
    """A `projections.SessionView` as the `Session` schema gives it, field for field.

    Read straight off the view by the schema's own field list (in one `attrgetter`):
    validating the view through pydantic cost a sixth of an append request
    (bench/RESULTS.md)."""
    shaped = dict(zip(_SESSION_FIELDS, _session_values(view), strict=True))
    for name in _SESSION_MOMENTS:
        if shaped[name] is not None:
            shaped[name] = jsonl.format_timestamp(shaped[name])
    shaped["blockers"] = _blockers_json(view)
    if view.attention is not None:
        shaped["attention"] = {"kind": view.attention.kind, "since": plain(view.attention.since)}
        if view.attention.other is not None:
            shaped["attention"]["with"] = view.attention.other
    if view.progress is not None:
        progress = view.progress
        shaped["progress"] = {"note": progress.note, "timestamp": plain(progress.timestamp)}
    shaped["messages"] = messages_json(view.messages)
    shaped["work"] = work_json(view.work)
    shaped["usage"] = usage_json(view.usage)
    shaped["budget"] = budget_json(view.budget)
    return shaped


def messages_json(messages: Iterable[EventRecord]) -> list[dict]:
    """Messages as the `Message` schema gives them."""
    return [
        {"note": m.note, "actor": m.actor, "timestamp": plain(m.timestamp), "seq": m.seq}
        for m in messages
    ]


def plan_summary_json(plan: plans.PlanSummary) -> dict:
    """A plan's summary (a view is one too) as the `PlanSummary` schema gives it."""
    return {
        "id": plan.id,
        "title": plan.title,
        "owner": plan.owner,
        "note": plan.note,
        "status": plan.status,
        "progress": {"done": plan.done, "total": plan.total},
        "counts": plan.counts,
        "seq": plan.seq,
        "created_at": plain(plan.created_at),
        "last_event_at": plain(plan.last_event_at),
        "done_when": plan.done_when,
        "usage": usage_json(plan.usage),
        "repo": plan.repo,
        "budget_usd": plan.budget_usd,
    }


def plan_json(view: plans.PlanView) -> dict:
    """A `plans.PlanView` as the `Plan` schema gives it."""
    return {
        **plan_summary_json(view),
        "ready": view.ready,
        "critical_path": view.critical_path,
        "nodes": [
            {
                "key": node.key,
                "title": node.title,
                "needs": list(node.needs),
                "state": node.state,
                "session": node.session,
                "attempts": node.attempts,
                "last_attempt": attempt_json(node.last_attempt),
                "usage": usage_json(node.usage),
                "paths": list(node.paths),
                "budget_usd": node.budget_usd,
                "overlaps": list(node.overlaps),
                "brief": node.brief,
            }
            for node in view.nodes
        ],
        "lease": view.lease,
        "max_attempts": view.max_attempts,
        "lapsed": view.lapsed,
        "claimable": view.claimable,
    }


def attempt_json(attempt: plans.Attempt | None) -> dict | None:
    """A node's last attempt (`plans.Attempt`) as the `LastAttempt` schema gives it."""
    if attempt is None:
        return None
    return {
        **attempt._asdict(),
        "work": work_json(attempt.work),
        "messages": messages_json(attempt.messages),
    }
