"""A plan's nodes' states from its graph and its nodes' sessions, and the orders they
are taken in: the ready list, the critical path."""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple

from sessions.domain.plans.graph import Graph
from sessions.domain.vocabulary import (
    DONE,
    LAPSED,
    RELEASED,
)

RETIRED = "retired"


RUNNING = "running"


FAILED = "failed"


READY = "ready"


UPSTREAM_FAILED = "upstream_failed"


WAITING = "waiting"


# Under `done_when: "merge"`: its latest session closed done, its pull request not yet
# merged. Not done: nothing that needs it is ready.
MERGING = "merging"


# A node whose unclosed session went silent past the plan's lease (derived at `now`).
NODE_STATES = (
    READY,
    LAPSED,
    RUNNING,
    MERGING,
    WAITING,
    DONE,
    FAILED,
    UPSTREAM_FAILED,
    RETIRED,
)


NOT_DONE = (RUNNING, LAPSED, MERGING, FAILED, READY, UPSTREAM_FAILED, WAITING)


# The states of a node with an unclosed session (its `session` names it).
HELD = (RUNNING, LAPSED)

# The outcomes that hand a node back as though never finished: a reclaim's or release's
# close of a lapsed session, and a worker's release (a dispatcher that stopped). The node
# is ready, or waiting on its needs, again; a failed or abandoned close fails it.
HANDED_BACK = (LAPSED, RELEASED)


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


def opening_order(session: NodeSession) -> tuple[datetime, str]:
    """Sessions on a node in the order they were opened: its latest is the last."""
    return session.opened_at, session.session


def node_states(
    graph: Graph, sessions: Iterable[NodeSession], merges: dict[str, str | None] | None = None
) -> dict[str, tuple[str, str | None]]:
    """Each node's state and, when running (or merging), its session's id. Under the
    plan's `done_when: "merge"`, `merges` gives the pull request state of each node's
    latest session closed done (absent: none known): done only once merged, failed when
    closed unmerged, merging until then."""
    # Each node's latest session (opened last), and its latest live one.
    latest: dict[str, NodeSession] = {}
    live: dict[str, NodeSession] = {}
    for session in sorted(sessions, key=opening_order):
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
        elif key in latest and latest[key].outcome not in HANDED_BACK:
            states[key] = _closed_state(graph, latest[key], merges or {})
        else:  # never started, or its latest session lapsed or was released
            needed = [states[need][0] for need in node.needs if need in graph.nodes]
            if all(state == DONE for state in needed):
                states[key] = (READY, None)
            elif any(state in (FAILED, UPSTREAM_FAILED) for state in needed):
                states[key] = (UPSTREAM_FAILED, None)
            else:
                states[key] = (WAITING, None)
    return states


def _closed_state(
    graph: Graph, session: NodeSession, merges: dict[str, str | None]
) -> tuple[str, str | None]:
    """The state of a node whose latest session closed (not lapsed)."""
    if session.outcome != DONE:
        return FAILED, None
    if graph.done_when != "merge":
        return DONE, None
    pr_state = merges.get(session.session)
    if pr_state == "merged":
        return DONE, None
    return (FAILED, None) if pr_state == "closed" else (MERGING, session.session)


def merge_candidates(graph: Graph, sessions: Iterable[NodeSession]) -> list[str]:
    """Under `done_when: "merge"`, the sessions whose pull request's state the node
    states need: each node's latest session, when it closed done."""
    if graph.done_when != "merge":
        return []
    latest: dict[str, NodeSession] = {}
    for session in sorted(sessions, key=opening_order):
        latest[session.node] = session
    return [s.session for s in latest.values() if s.outcome == DONE]


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
    for session in sorted(on_touched, key=opening_order):
        latest[session.node] = session
    return {**states, **{key: (RUNNING, latest[key].session) for key in touched}}


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
