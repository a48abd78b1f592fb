"""Build plans: the graph a plan's events make, and every fact derived from it and from
its nodes' sessions. Pure: no Django, no clock, no I/O (DESIGN.md, "Build plans").

- `apply` is the rule of one plan event against the graph so far: it returns the new
  graph or raises `GraphError` naming the field and what is wrong (unknown or repeated
  keys, a missing edge, a cycle, a retire that would strand a node).
- `plan_view` derives node states, the ready order, progress, status and the critical
  path from the plan's events and a summary of its nodes' sessions.
"""

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import NamedTuple

from sessions.domain.projections import is_lapsed
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import (
    ACTIVE,
    DONE,
    LAPSED,
    MAX_PLAN_KEYS,
    MAX_PLAN_NODES,
    PLAN_AMEND,
    PLAN_CREATE,
)

RETIRED = "retired"
RUNNING = "running"
FAILED = "failed"
READY = "ready"
UPSTREAM_FAILED = "upstream_failed"
WAITING = "waiting"
# A node whose unclosed session went silent past the plan's lease (derived at `now`).
NODE_STATES = (READY, LAPSED, RUNNING, WAITING, DONE, FAILED, UPSTREAM_FAILED, RETIRED)
NOT_DONE = (RUNNING, LAPSED, FAILED, READY, UPSTREAM_FAILED, WAITING)
# The states of a node with an unclosed session (its `session` names it).
HELD = (RUNNING, LAPSED)

OPEN = "open"
CANCELLED = "cancelled"
PLAN_STATUSES = (OPEN, DONE, CANCELLED)


class GraphError(ValueError):
    """A plan event that does not fit the graph: `field` is the event field at fault."""

    def __init__(self, field_name: str, problem: str) -> None:
        super().__init__(f"{field_name} {problem}")
        self.field = field_name
        self.problem = problem


@dataclass(frozen=True)
class Node:
    key: str
    title: str
    needs: tuple[str, ...] = ()
    retired: bool = False


@dataclass(frozen=True)
class Graph:
    """A plan's nodes in plan order (the order they were added), retired ones included,
    and the liveness settings in force: its lease in minutes and its cap on attempts
    (None when the plan's events never named them: an older file)."""

    nodes: dict[str, Node] = field(default_factory=dict)
    lease: int | None = None
    max_attempts: int | None = None

    def live(self) -> list[Node]:
        return [node for node in self.nodes.values() if not node.retired]

    @functools.cached_property
    def order(self) -> list[str]:
        """Every node's key after the keys it needs (worked out once per graph: a kept
        graph serves many claims)."""
        return topological({key: node.needs for key, node in self.nodes.items()})


def _cycle(nodes: dict[str, Node]) -> list[str] | None:
    """A cycle among the live nodes' needs, as keys `[a, b, …, a]`, or None."""
    live = {key: node for key, node in nodes.items() if not node.retired}
    finished: set[str] = set()
    for root in live:
        if root in finished:
            continue
        path: list[str] = [root]
        on_path = {root}
        stack = [iter(live[root].needs)]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                left = path.pop()
                on_path.discard(left)
                finished.add(left)
                continue
            if step in on_path:
                return [*path[path.index(step) :], step]
            if step in finished or step not in live:
                continue
            path.append(step)
            on_path.add(step)
            stack.append(iter(live[step].needs))
    return None


def _add_nodes(nodes: dict[str, Node], added: Sequence[dict]) -> None:
    new_keys: set[str] = set()
    for index, given in enumerate(added):
        key = given["key"]
        if key in nodes or key in new_keys:
            where = "is already a key of this plan" if key in nodes else "is given twice"
            raise GraphError("nodes", f"[{index}] key {key!r} {where} (keys are never reused)")
        new_keys.add(key)
    live_keys = {key for key, node in nodes.items() if not node.retired} | new_keys
    for index, given in enumerate(added):
        for need in given.get("needs") or ():
            if need not in live_keys:
                what = "a retired node" if need in nodes else "no node of this plan"
                raise GraphError("nodes", f"[{index}] {given['key']!r} needs {need!r}, {what}")
        nodes[given["key"]] = Node(given["key"], given["title"], tuple(given.get("needs") or ()))


def apply(graph: Graph, event: EventRecord) -> Graph:
    """The graph after a plan event, or `GraphError` when the event does not fit it."""
    if event.type == PLAN_CREATE and graph.nodes:
        raise GraphError("type", "plan_create must be the plan's first event")
    if event.type == PLAN_AMEND and not graph.nodes:
        raise GraphError("type", "a plan begins with plan_create")
    nodes = dict(graph.nodes)
    _add_nodes(nodes, event.nodes or ())
    for index, edge in enumerate(event.drop_needs or ()):
        node = nodes.get(edge["node"])
        if node is None or edge["needs"] not in node.needs:
            raise GraphError(
                "drop_needs", f"[{index}] {edge['node']!r} does not need {edge['needs']!r}"
            )
        nodes[node.key] = replace(node, needs=tuple(n for n in node.needs if n != edge["needs"]))
    for index, edge in enumerate(event.needs or ()):
        for end in (edge["node"], edge["needs"]):
            if end not in nodes or nodes[end].retired:
                what = "a retired node" if end in nodes else "no node of this plan"
                raise GraphError("needs", f"[{index}] {end!r} is {what}")
        node = nodes[edge["node"]]
        if edge["needs"] in node.needs:
            raise GraphError("needs", f"[{index}] {node.key!r} already needs {edge['needs']!r}")
        nodes[node.key] = replace(node, needs=(*node.needs, edge["needs"]))
    for index, key in enumerate(event.retire or ()):
        if key not in nodes or nodes[key].retired:
            what = "already retired" if key in nodes else "no node of this plan"
            raise GraphError("retire", f"[{index}] {key!r} is {what}")
        nodes[key] = replace(nodes[key], retired=True)
    retired_now = set(event.retire or ())
    for node in nodes.values():
        if not node.retired:
            stranded = [need for need in node.needs if need in retired_now]
            if stranded:
                raise GraphError(
                    "retire",
                    f"{stranded[0]!r} cannot be retired: {node.key!r} still needs it "
                    "(drop that need or retire it too)",
                )
    if len(nodes) > MAX_PLAN_KEYS:
        raise GraphError("nodes", f"a plan may hold at most {MAX_PLAN_KEYS} keys in all")
    if sum(1 for node in nodes.values() if not node.retired) > MAX_PLAN_NODES:
        raise GraphError("nodes", f"a plan may hold at most {MAX_PLAN_NODES} live nodes")
    cycle = _cycle(nodes)
    if cycle:
        where = "nodes" if event.type == PLAN_CREATE or not event.needs else "needs"
        raise GraphError(where, f"would make a cycle: {' → '.join(cycle)}")
    return Graph(
        nodes,
        graph.lease if event.lease is None else event.lease,
        graph.max_attempts if event.max_attempts is None else event.max_attempts,
    )


def graph_of(events: Iterable[EventRecord]) -> Graph:
    """The graph of a plan's stored events. Each was checked when written; one that no
    longer fits (an odd imported history) is passed over rather than raised."""
    return graph_after(Graph(), events)


def graph_after(graph: Graph, events: Iterable[EventRecord]) -> Graph:
    """`graph` with later stored events folded in, as `graph_of` folds them."""
    for event in events:
        try:
            graph = apply(graph, event)
        except GraphError:
            continue
    return graph


class NodeSession(NamedTuple):
    """What node states need of a session working on a node."""

    session: str
    node: str
    opened_at: datetime
    outcome: str | None  # None while the session is not closed
    closed_at: datetime | None = None


def sessions_as_of(sessions: Iterable[NodeSession], at: datetime) -> list[NodeSession]:
    """The node sessions as they were at `at`: those opened by then, open unless closed
    by then."""
    return [
        s if s.closed_at is not None and s.closed_at <= at else s._replace(outcome=None)
        for s in sessions
        if s.opened_at <= at
    ]


class Liveness(NamedTuple):
    """What a node's unclosed session's lapse depends on besides the lease and `now`."""

    status: str
    last_activity: datetime


class Attempt(NamedTuple):
    """A node's latest closed session: the handoff the next worker reads."""

    session: str
    outcome: str
    note: str | None  # its next action: why it ended (a reclaim's own words)
    progress: str | None  # its latest progress note: what it was doing


@dataclass(frozen=True)
class NodeView:
    key: str
    title: str
    needs: tuple[str, ...]
    state: str
    session: str | None  # the unclosed session of a running or lapsed node
    attempts: int = 0  # sessions ever started on it
    last_attempt: Attempt | None = None


@dataclass(frozen=True)
class PlanView:
    id: str
    title: str | None
    owner: str | None
    note: str | None
    status: str
    seq: int
    created_at: datetime | None
    last_event_at: datetime | None
    nodes: list[NodeView]
    ready: list[str]
    critical_path: list[str]
    done: int
    total: int
    counts: dict[str, int]
    lease: int | None = None
    max_attempts: int | None = None
    lapsed: list[str] = field(default_factory=list)  # in ready order
    claimable: list[str] = field(default_factory=list)  # what a claim would take, in order

    def node(self, key: str) -> NodeView | None:
        return next((node for node in self.nodes if node.key == key), None)


def _opening_order(session: NodeSession) -> tuple[datetime, str]:
    """Sessions on a node in the order they were opened: its latest is the last."""
    return session.opened_at, session.session


def node_states(graph: Graph, sessions: Iterable[NodeSession]) -> dict[str, tuple[str, str | None]]:
    """Each node's state and, when running, its live session's id."""
    # Each node's latest session (opened last), and its latest live one.
    latest: dict[str, NodeSession] = {}
    live: dict[str, NodeSession] = {}
    for session in sorted(sessions, key=_opening_order):
        latest[session.node] = session
        if session.outcome is None:
            live[session.node] = session
    states: dict[str, tuple[str, str | None]] = {}
    for key in graph.order:  # needs first
        node = graph.nodes[key]
        if node.retired:
            states[key] = (RETIRED, None)
        elif key in live:
            states[key] = (RUNNING, live[key].session)
        elif key in latest and latest[key].outcome != LAPSED:
            states[key] = (DONE if latest[key].outcome == DONE else FAILED, None)
        else:  # never started, or its latest session lapsed
            needed = [states[need][0] for need in node.needs if need in graph.nodes]
            if all(state == DONE for state in needed):
                states[key] = (READY, None)
            elif any(state in (FAILED, UPSTREAM_FAILED) for state in needed):
                states[key] = (UPSTREAM_FAILED, None)
            else:
                states[key] = (WAITING, None)
    return states


def node_states_after(
    graph: Graph,
    states: dict[str, tuple[str, str | None]],
    sessions: Sequence[NodeSession],
    started: Sequence[NodeSession],
) -> dict[str, tuple[str, str | None]]:
    """`node_states(graph, [*sessions, *started])`, from `states`, which is
    `node_states(graph, sessions)`, when what came since is `started`, sessions not
    closed. A start on a node that was ready or running leaves it running and changes no
    other node's state (a need counts only once it is done or failed); anything else
    is worked out again from the start."""
    touched = {session.node for session in started}
    if any(session.outcome is not None for session in started) or any(
        key not in graph.nodes or states[key][0] not in (READY, RUNNING) for key in touched
    ):
        return node_states(graph, [*sessions, *started])
    latest: dict[str, NodeSession] = {}
    on_touched = [s for s in (*sessions, *started) if s.node in touched and s.outcome is None]
    for session in sorted(on_touched, key=_opening_order):
        latest[session.node] = session
    return {**states, **{key: (RUNNING, latest[key].session) for key in touched}}


def topological(needs: dict[str, Sequence[str]]) -> list[str]:
    """Every key of `needs` (key → the keys it needs), each after the keys it needs,
    given order otherwise."""
    order: list[str] = []
    seen: set[str] = set()
    for root in needs:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(needs[root]))]
        while stack:
            key, pending = stack[-1]
            need = next(pending, None)
            if need is None:
                stack.pop()
                order.append(key)
            elif need in needs and need not in seen:
                seen.add(need)
                stack.append((need, iter(needs[need])))
    return order


def topological_keys(view: "PlanView") -> list[str]:
    return topological({node.key: node.needs for node in view.nodes})


def ready_order(graph: Graph, states: dict[str, str]) -> list[str]:
    """The ready nodes, most unlocking first, then plan order."""
    return ranked(graph, states, {key for key, state in states.items() if state == READY})


def ranked(graph: Graph, states: dict[str, str], chosen: Iterable[str]) -> list[str]:
    """The `chosen` keys in the ready list's order: most unlocking first (how many live,
    not-done nodes need each, directly or through others), then plan order."""
    chosen = set(chosen)
    pending = {key for key, state in states.items() if state in NOT_DONE}
    dependents: dict[str, list[str]] = {}
    for node in graph.nodes.values():
        if node.key in pending:
            for need in node.needs:
                dependents.setdefault(need, []).append(node.key)
    ready = [key for key in graph.nodes if key in chosen]
    if not dependents:  # nothing waits on anything: plan order
        return ready
    position = {key: index for index, key in enumerate(graph.nodes)}

    def unlocks(key: str) -> int:
        seen: set[str] = set()
        stack = list(dependents.get(key, ()))
        while stack:
            other = stack.pop()
            if other not in seen:
                seen.add(other)
                stack.extend(dependents.get(other, ()))
        return len(seen)

    return sorted(ready, key=lambda key: (-unlocks(key), position[key]))


def critical_path(graph: Graph, states: dict[str, str]) -> list[str]:
    """The longest chain of live, not-done nodes, first-to-do first; ties go to the
    earlier node in plan order."""
    pending = [key for key in graph.order if states[key] in NOT_DONE]
    position = {key: index for index, key in enumerate(graph.nodes)}
    depth: dict[str, int] = {}
    for key in pending:  # needs come first
        depth[key] = 1 + max((depth[n] for n in graph.nodes[key].needs if n in depth), default=0)
    if not depth:
        return []

    def deepest(keys: Iterable[str]) -> str:
        return min(keys, key=lambda key: (-depth[key], position[key]))

    path = [deepest(depth)]
    while True:
        needs = [n for n in graph.nodes[path[-1]].needs if n in depth]
        if not needs:
            return path[::-1]
        path.append(deepest(needs))


# Liveness ------------------------------------------------------------------------------


def unclosed_by_node(sessions: Iterable[NodeSession]) -> dict[str, list[str]]:
    """Each node's unclosed sessions, in the order they were opened."""
    found: dict[str, list[str]] = {}
    for session in sorted(sessions, key=_opening_order):
        if session.outcome is None:
            found.setdefault(session.node, []).append(session.session)
    return found


def with_lapses(
    graph: Graph,
    states: dict[str, tuple[str, str | None]],
    sessions: Iterable[NodeSession],
    liveness: dict[str, Liveness],
    now: datetime,
) -> dict[str, tuple[str, str | None]]:
    """`states` (`node_states`) with each running node whose unclosed sessions have all
    lapsed at `now` made `lapsed`: active, and silent longer than the plan's lease
    (`liveness` gives each unclosed session's status and last activity). A plan with no
    lease lapses nothing. Worked out at every read: it depends on `now`."""
    if graph.lease is None:
        return states
    lease = timedelta(minutes=graph.lease)
    unclosed = unclosed_by_node(sessions)

    def silent(session_id: str) -> bool:
        live = liveness.get(session_id)
        return (
            live is not None and live.status == ACTIVE and is_lapsed(live.last_activity, now, lease)
        )

    lapsed = {
        key: (LAPSED, session)
        for key, (state, session) in states.items()
        if state == RUNNING and all(silent(i) for i in unclosed.get(key, ()))
    }
    return {**states, **lapsed} if lapsed else states


def attempts_of(sessions: Iterable[NodeSession]) -> dict[str, int]:
    """How many sessions were ever started on each node (that has any)."""
    counts: dict[str, int] = {}
    for session in sessions:
        counts[session.node] = counts.get(session.node, 0) + 1
    return counts


def latest_closed(sessions: Iterable[NodeSession]) -> dict[str, NodeSession]:
    """Each node's latest closed session (in opening order), for those that have one."""
    found: dict[str, NodeSession] = {}
    for session in sorted(sessions, key=_opening_order):
        if session.outcome is not None:
            found[session.node] = session
    return found


def is_reclaimable(
    graph: Graph, states: dict[str, tuple[str, str | None]], key: str, attempts: int
) -> bool:
    """Whether a lapsed node may be reclaimed (`reclaim_allowed`)."""
    return states[key][0] == LAPSED and reclaim_allowed(graph, states, key, attempts)


def reclaim_allowed(
    graph: Graph, states: dict[str, tuple[str, str | None]], key: str, attempts: int
) -> bool:
    """Whether the node, were it lapsed, could be reclaimed: below the plan's cap on
    attempts (none: always), and every node it needs done (a reclaim is a start)."""
    if graph.max_attempts is not None and attempts >= graph.max_attempts:
        return False
    return all(states[need][0] == DONE for need in graph.nodes[key].needs)


def may_have_lapsed(session: NodeSession, now: datetime, lease: timedelta) -> bool:
    """Whether an unclosed node session can have lapsed at `now` at all: one opened
    within the lease cannot (its last activity is no earlier than its start), so its
    liveness need not be read."""
    return session.outcome is None and now - session.opened_at > lease


def claimable_nodes(
    graph: Graph, found: dict[str, tuple[str, str | None]], attempts: dict[str, int]
) -> list[str]:
    """What "claim the next node" would take, in order: the ready nodes and the
    reclaimable lapsed ones, in the ready list's order."""
    states = {key: state for key, (state, _) in found.items()}
    chosen = [
        key
        for key, state in states.items()
        if state == READY or is_reclaimable(graph, found, key, attempts.get(key, 0))
    ]
    return ranked(graph, states, chosen)


def ready_nodes(graph: Graph, found: dict[str, tuple[str, str | None]]) -> list[str]:
    """The plan's ready nodes in claim order (`plan_view(...).ready`, without the rest),
    from its graph and its nodes' states (`node_states`)."""
    return ready_order(graph, {key: state for key, (state, _) in found.items()})


# What a node's latest closed session left for the next worker: (next action, progress
# note), by session id.
Handoffs = dict[str, tuple[str | None, str | None]]


def plan_view(
    plan_id: str,
    events: Sequence[EventRecord],
    sessions: Iterable[NodeSession],
    now: datetime | None = None,
    liveness: dict[str, Liveness] | None = None,
    handoffs: Handoffs | None = None,
) -> PlanView:
    """Every fact about a plan, from its events (stream order) and its nodes' sessions,
    at `now` with its unclosed sessions' `liveness` (without them nothing lapses)."""
    ends = [events[0], events[-1]] if events else []
    return plan_view_of(plan_id, graph_of(events), ends, sessions, now, liveness, handoffs)


def plan_view_of(
    plan_id: str,
    graph: Graph,
    ends: Sequence[EventRecord],
    sessions: Iterable[NodeSession],
    now: datetime | None = None,
    liveness: dict[str, Liveness] | None = None,
    handoffs: Handoffs | None = None,
) -> PlanView:
    """`plan_view` from the plan's graph (`graph_of` its events) and the stream's `ends`
    (its first and last events, or one when they are the same), so that a view costs
    the same however long the plan's history."""
    sessions = list(sessions)
    found = node_states(graph, sessions)
    if now is not None and liveness is not None:
        found = with_lapses(graph, found, sessions, liveness, now)
    states = {key: state for key, (state, _) in found.items()}
    attempts = attempts_of(sessions)
    closed = latest_closed(sessions)
    handoffs = handoffs or {}
    counts: dict[str, int] = {}
    for state in states.values():
        counts[state] = counts.get(state, 0) + 1
    live = [key for key, state in states.items() if state != RETIRED]
    done = sum(1 for key in live if states[key] == DONE)
    if not live:
        status = CANCELLED
    elif done == len(live):
        status = DONE
    else:
        status = OPEN
    create = ends[0] if ends and ends[0].type == PLAN_CREATE else None
    last = ends[-1] if ends else None
    return PlanView(
        id=plan_id,
        title=create.title if create else None,
        owner=create.actor if create else None,
        note=create.note if create else None,
        status=status,
        seq=last.seq if last else 0,
        created_at=create.timestamp if create else None,
        last_event_at=last.timestamp if last else None,
        nodes=[
            NodeView(
                node.key,
                node.title,
                node.needs,
                *found[node.key],
                attempts.get(node.key, 0),
                attempt_of(closed.get(node.key), handoffs),
            )
            for node in graph.nodes.values()
        ],
        ready=ready_order(graph, states),
        critical_path=critical_path(graph, states),
        done=done,
        total=len(live),
        counts={state: counts[state] for state in NODE_STATES if counts.get(state)},
        lease=graph.lease,
        max_attempts=graph.max_attempts,
        lapsed=ranked(graph, states, [key for key, state in states.items() if state == LAPSED]),
        claimable=claimable_nodes(graph, found, attempts),
    )


def attempt_of(session: NodeSession | None, handoffs: Handoffs) -> Attempt | None:
    """A node's latest closed session as its last attempt, with its handoff, or None."""
    if session is None:
        return None
    note, progress = handoffs.get(session.session, (None, None))
    return Attempt(session.session, session.outcome, note, progress)
