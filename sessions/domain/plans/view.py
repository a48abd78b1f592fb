"""A plan's whole view: every fact about it at `now`, from its events and its nodes'
sessions."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sessions.domain.plans.graph import Graph, graph_of, topological
from sessions.domain.plans.liveness import (
    Attempt,
    Handoff,
    Liveness,
    attempts_of,
    claimable_nodes,
    latest_closed,
    with_lapses,
)
from sessions.domain.plans.space import overlapping_last, overlaps
from sessions.domain.plans.states import (
    NODE_STATES,
    RETIRED,
    NodeSession,
    critical_path,
    node_states,
    ranked,
    ready_order,
)
from sessions.domain.records import EventRecord
from sessions.domain.spend import Usage
from sessions.domain.vocabulary import (
    DONE,
    LAPSED,
    PLAN_CREATE,
)

OPEN = "open"


CANCELLED = "cancelled"


PLAN_STATUSES = (OPEN, DONE, CANCELLED)


@dataclass(frozen=True)
class NodeView:
    key: str
    title: str
    needs: tuple[str, ...]
    state: str
    session: str | None  # the unclosed session of a running or lapsed node
    attempts: int = 0  # sessions ever started on it
    last_attempt: Attempt | None = None
    usage: Usage | None = None  # what its sessions spent, all attempts
    paths: tuple[str, ...] = ()  # the path patterns it will touch
    budget_usd: int | float | None = None
    # A ready or reclaimable node's: the running nodes whose paths may overlap its own.
    overlaps: tuple[str, ...] = ()
    brief: str | None = None  # the text an agent is given to do it


@dataclass(frozen=True, kw_only=True)
class PlanSummary:
    """What a list of plans shows of each: its progress, never its nodes (a 500-node
    plan's view is half a megabyte, and its overlaps are worth working out only for the
    plan a person or an agent opens). Given by name: a view adds its nodes to it."""

    id: str
    title: str | None
    owner: str | None
    note: str | None
    status: str
    seq: int
    created_at: datetime | None
    last_event_at: datetime | None
    done: int
    total: int
    counts: dict[str, int]
    done_when: str = "close"  # what makes a node done: its close, or its PR's merge
    usage: Usage | None = None  # what its nodes spent, retired ones included
    repo: str | None = None
    budget_usd: int | float | None = None


@dataclass(frozen=True, kw_only=True)
class PlanView(PlanSummary):
    """Every fact about a plan: its summary, and its nodes, what is ready and claimable,
    what lapsed, and the critical path."""

    nodes: list[NodeView]
    ready: list[str]
    critical_path: list[str]
    lease: int | None = None
    max_attempts: int | None = None
    lapsed: list[str] = field(default_factory=list)  # in ready order
    claimable: list[str] = field(default_factory=list)  # what a claim would take, in order

    def node(self, key: str) -> NodeView | None:
        return next((node for node in self.nodes if node.key == key), None)


def topological_keys(view: "PlanView") -> list[str]:
    return topological({node.key: node.needs for node in view.nodes})


# What each node's latest closed session left for the next worker, by session id.
Handoffs = dict[str, Handoff]


def plan_view(
    plan_id: str,
    events: Sequence[EventRecord],
    sessions: Iterable[NodeSession],
    now: datetime | None = None,
    liveness: dict[str, Liveness] | None = None,
    handoffs: Handoffs | None = None,
    merges: dict[str, str | None] | None = None,
) -> PlanView:
    """Every fact about a plan, from its events (stream order) and its nodes' sessions,
    at `now` with its unclosed sessions' `liveness` (without them nothing lapses) and,
    under `done_when: "merge"`, its done sessions' pull request states (`merges`)."""
    ends = [events[0], events[-1]] if events else []
    graph = graph_of(events)
    return plan_view_of(plan_id, graph, ends, sessions, now, liveness, handoffs, merges)


def plan_view_of(
    plan_id: str,
    graph: Graph,
    ends: Sequence[EventRecord],
    sessions: Iterable[NodeSession],
    now: datetime | None = None,
    liveness: dict[str, Liveness] | None = None,
    handoffs: Handoffs | None = None,
    merges: dict[str, str | None] | None = None,
) -> PlanView:
    """`plan_view` from the plan's graph (`graph_of` its events) and the stream's `ends`
    (its first and last events, or one when they are the same), so that a view costs
    the same however long the plan's history."""
    sessions = list(sessions)
    found = _found_states(graph, sessions, now, liveness, merges)
    states = {key: state for key, (state, _) in found.items()}
    attempts = attempts_of(sessions)
    closed = latest_closed(sessions)
    handoffs = handoffs or {}
    tally = _Tally.of(states)
    claimable = claimable_nodes(graph, found, attempts)
    overlapping = overlaps(graph, states, claimable)
    return PlanView(
        **_heading(plan_id, ends),
        status=tally.status,
        nodes=[
            NodeView(
                node.key,
                node.title,
                node.needs,
                *found[node.key],
                attempts.get(node.key, 0),
                attempt_of(closed.get(node.key), handoffs),
                paths=node.paths,
                budget_usd=node.budget_usd,
                overlaps=tuple(overlapping.get(node.key, ())),
                brief=node.brief,
            )
            for node in graph.nodes.values()
        ],
        ready=overlapping_last(ready_order(graph, states), overlapping),
        critical_path=critical_path(graph, states),
        done=tally.done,
        total=tally.total,
        counts=tally.counts,
        lease=graph.lease,
        max_attempts=graph.max_attempts,
        done_when=graph.done_when,
        lapsed=ranked(graph, states, [key for key, state in states.items() if state == LAPSED]),
        claimable=overlapping_last(claimable, overlapping),
        repo=graph.repo,
        budget_usd=graph.budget_usd,
    )


def plan_summary_of(
    plan_id: str,
    graph: Graph,
    ends: Sequence[EventRecord],
    sessions: Iterable[NodeSession],
    now: datetime | None = None,
    liveness: dict[str, Liveness] | None = None,
    merges: dict[str, str | None] | None = None,
) -> PlanSummary:
    """A plan's summary: its view's heading and tally (`plan_view_of`, same arguments
    but the handoffs), without its nodes, ready list or overlaps."""
    found = _found_states(graph, list(sessions), now, liveness, merges)
    tally = _Tally.of({key: state for key, (state, _) in found.items()})
    return PlanSummary(
        **_heading(plan_id, ends),
        status=tally.status,
        done=tally.done,
        total=tally.total,
        counts=tally.counts,
        done_when=graph.done_when,
        repo=graph.repo,
        budget_usd=graph.budget_usd,
    )


def _found_states(
    graph: Graph,
    sessions: list[NodeSession],
    now: datetime | None,
    liveness: dict[str, Liveness] | None,
    merges: dict[str, str | None] | None,
) -> dict[str, tuple[str, str | None]]:
    """Each node's state and session (`node_states`), lapses included when `now` and
    the sessions' `liveness` are known."""
    found = node_states(graph, sessions, merges)
    if now is not None and liveness is not None:
        found = with_lapses(graph, found, sessions, liveness, now)
    return found


def _heading(plan_id: str, ends: Sequence[EventRecord]) -> dict:
    """What a plan's stream's first and last events say of it: the fields a view and a
    summary share."""
    create = ends[0] if ends and ends[0].type == PLAN_CREATE else None
    last = ends[-1] if ends else None
    return {
        "id": plan_id,
        "title": create.title if create else None,
        "owner": create.actor if create else None,
        "note": create.note if create else None,
        "seq": last.seq if last else 0,
        "created_at": create.timestamp if create else None,
        "last_event_at": last.timestamp if last else None,
    }


@dataclass(frozen=True)
class _Tally:
    """The nodes counted by state, how many of the live ones are done, and so the
    plan's status: cancelled with no live node, done when all are."""

    counts: dict[str, int]
    done: int
    total: int
    status: str

    @classmethod
    def of(cls, states: dict[str, str]) -> "_Tally":
        counts: dict[str, int] = {}
        for state in states.values():
            counts[state] = counts.get(state, 0) + 1
        total = len(states) - counts.get(RETIRED, 0)
        done = counts.get(DONE, 0)
        status = CANCELLED if not total else DONE if done == total else OPEN
        ordered = {state: counts[state] for state in NODE_STATES if counts.get(state)}
        return cls(ordered, done, total, status)


def attempt_of(session: NodeSession | None, handoffs: Handoffs) -> Attempt | None:
    """A node's latest closed session as its last attempt, with its handoff, or None."""
    if session is None:
        return None
    left = handoffs.get(session.session) or Handoff(None, None)
    return Attempt(
        session.session, session.outcome, left.note, left.progress, left.work, left.messages
    )
