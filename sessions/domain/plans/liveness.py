"""Liveness on a plan: which running nodes lapsed at `now` (silent past the lease), how
many attempts each had, and which may be reclaimed or claimed."""

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import NamedTuple

from sessions.domain.plans.graph import Graph
from sessions.domain.plans.states import (
    READY,
    RUNNING,
    NodeSession,
    opening_order,
    ranked,
    ready_order,
)
from sessions.domain.projections import is_lapsed
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import (
    ACTIVE,
    DONE,
    LAPSED,
)


class Liveness(NamedTuple):
    """What a node's unclosed session's lapse depends on besides the lease and `now`."""

    status: str
    last_activity: datetime


class Handoff(NamedTuple):
    """What a closed session leaves for whoever works its node next."""

    note: str | None  # its next action: why it ended (a reclaim's own words)
    progress: str | None  # its latest progress note: what it was doing
    # The people's messages its worker never acknowledged, oldest first (the latest
    # MAX_BLOCKERS_SHOWN): words meant for whoever works the node reach the next worker.
    messages: tuple[EventRecord, ...] = ()
    # Where its work landed (`domain.work.Work`): the next worker continues its branch and
    # pull request. Read afresh, unlike the rest: a forge reports after a close.
    work: object = None


class Attempt(NamedTuple):
    """A node's latest closed session: the handoff the next worker reads."""

    session: str
    outcome: str | None  # always given: a last attempt is a closed session
    note: str | None
    progress: str | None
    work: object = None  # where its work landed (`domain.work.Work`), or None
    messages: tuple[EventRecord, ...] = ()


def unclosed_by_node(sessions: Iterable[NodeSession]) -> dict[str, list[str]]:
    """Each node's unclosed sessions, in the order they were opened."""
    found: dict[str, list[str]] = {}
    for session in sorted(sessions, key=opening_order):
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
    for session in sorted(sessions, key=opening_order):
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
