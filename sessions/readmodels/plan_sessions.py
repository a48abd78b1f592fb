"""Each plan's node sessions, kept per process and caught up under the plan's lock.

A claim and a start on a node need the states of all the plan's nodes, and those need
every session ever started on the plan with its close: read whole, a 480-node plan's
sessions were a third of a claim's time, and more as the plan grew. But the sessions of
a plan only gain new starts, and a session's close is final. So each process keeps, per
plan, the sessions it has read with the position (event id) of the latest start among
them, and asks only for the starts above that position and the closes of the sessions
it holds as still running.

Reading by position is exact here because every start on a plan's node holds the plan's
lock (`store.holding`) until it commits, and so does the reader: no start on the plan
can be in flight, and none can commit later with a lower id. Closes take no plan lock,
but they are asked for by session, not by position. The sessions are kept only when
the reader's transaction is its own (no enclosing one) and has written nothing yet, so
it sees committed rows only; and the count of starts at or below the position must
match what is kept, or the plan's sessions are read again (the table was emptied or
restored). With each start comes the actor's idempotency key, if any, so that a claim
learns it is not a repeat without asking; and with the sessions, their node states for
the plan's graph, brought up to date when only starts came since (`plans.
node_states_after`), worked out again otherwise. Nothing is written anywhere.
"""

from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import NamedTuple

from django.utils import timezone

from sessions import store
from sessions.domain import plans
from sessions.domain.plans import NodeSession
from sessions.readmodels import work as work_model
from sessions.readmodels.kept import Kept, own_transaction
from sessions.store import connections


@dataclass(frozen=True)
class _Known:
    sessions: dict[str, NodeSession]  # by session id
    position: int  # the id of the latest start among them
    keys: frozenset[tuple[str, str]] = frozenset()  # (actor, key) of starts made under one
    graph: plans.Graph | None = None  # the graph `states` were worked out for
    states: dict | None = None  # `plans.node_states` of that graph and `sessions`


class Found(NamedTuple):
    # `plans.node_states`, with the nodes asked about that lapsed at `now`
    # (`plans.with_lapses`); the others shown running
    states: dict[str, tuple[str, str | None]]
    # The (actor, idempotency key) pairs of the plan's starts; None when not known (read
    # inside an enclosing transaction), so that a claim asks the store instead.
    keys: frozenset[tuple[str, str]] | None
    attempts: dict[str, int]  # sessions ever started on each node
    sessions: list[NodeSession]  # every session started on the plan's nodes
    now: datetime  # the moment lapses are judged at
    # Unclosed sessions a claim has already held and read under their locks (their
    # `projections.ViewEvents`), so that its reclaim need not again.
    held: dict = {}


# Kept by a reader holding the plan's lock in a transaction of its own (no enclosing one)
# that has written nothing yet: what it reads is committed.
KNOWN = Kept(bound=1_000, keep_when=own_transaction)


def node_states(
    plan_id: str,
    graph: plans.Graph,
    now: datetime | None = None,
    lapses_of: Collection[str] | None = None,
) -> Found:
    """The states of the plan's nodes (`plans.node_states` of its `graph` and its node
    sessions) at `now` (default: the clock), for a caller holding the plan's lock
    (`store.holding`) that has written nothing in its transaction yet. When only starts
    came since the states kept for the same graph, those are brought up to date instead
    of worked out again. Which running nodes have lapsed is never kept: it depends on
    `now` and on their sessions' last activity, read afresh each time, for the nodes
    `lapses_of` (default: all; `with_lapses` adds others later)."""
    now = timezone.now() if now is None else now
    if connections.in_nested_transaction() or graph.done_when == "merge":
        # In a transaction inside another, or under `done_when: "merge"` (a merge after a
        # close moves a node without a start or close to catch up on): worked out afresh.
        sessions = store.node_sessions(plan_id)
        merges = work_model.merges_of(graph, sessions)
        found = Found(plans.node_states(graph, sessions, merges), None, {}, sessions, now)
        return with_lapses(graph, found, lapses_of)
    known = KNOWN.get(plan_id)
    update = _caught_up(plan_id, known) if known is not None else None
    if update is None:
        known, update = None, _caught_up(plan_id, _Known({}, 0))
    found, started, closes = update
    # A close may change any dependent's state: then they are all worked out again (as
    # `node_states_after` does itself for a new session already closed).
    if known is not None and known.graph is graph and not closes:
        sessions = list(known.sessions.values())
        states = plans.node_states_after(graph, known.states, sessions, started)
    else:
        states = plans.node_states(graph, list(found.sessions.values()))
    KNOWN.put(plan_id, replace(found, graph=graph, states=states))
    sessions = list(found.sessions.values())
    return with_lapses(graph, Found(states, found.keys, {}, sessions, now), lapses_of)


def with_lapses(
    graph: plans.Graph, found: Found, lapses_of: Collection[str] | None = None
) -> Found:
    """`found` with the nodes among `lapses_of` (default: all) that lapsed at its `now`
    made `lapsed`, and its attempts counted. Only the unclosed sessions of those running
    nodes that may have lapsed (`plans.may_have_lapsed`) are read."""
    states, now = found.states, found.now
    if graph.lease is not None:
        keys = set(states) if lapses_of is None else set(lapses_of)
        lease = timedelta(minutes=graph.lease)
        older = [
            s.session
            for s in found.sessions
            if s.node in keys
            and states.get(s.node, ("",))[0] == plans.RUNNING
            and plans.may_have_lapsed(s, now, lease)
        ]
        if older:
            liveness = store.liveness_of(older)
            lapsed = plans.with_lapses(graph, states, found.sessions, liveness, now)
            states = {**states, **{k: lapsed[k] for k in keys if k in lapsed}}
    return found._replace(states=states, attempts=plans.attempts_of(found.sessions))


def _caught_up(plan_id: str, known: _Known) -> tuple[_Known, list[NodeSession], bool] | None:
    """`known` with what changed since (its graph and states not yet), the sessions
    started since, and whether any it held as running closed; None if the table no
    longer holds `known`."""
    sessions = dict(known.sessions)
    running = [s.session for s in sessions.values() if s.outcome is None]
    started, closed, below = store.node_sessions_after(plan_id, known.position, running)
    if below != len(sessions):
        return None
    for session_id, (outcome, closed_at) in closed.items():
        sessions[session_id] = sessions[session_id]._replace(outcome=outcome, closed_at=closed_at)
    for start in started:
        sessions[start.session.session] = start.session
    keys = known.keys | {start.key for start in started if start.key is not None}
    position = max((start.position for start in started), default=known.position)
    return _Known(sessions, position, keys), [start.session for start in started], bool(closed)
