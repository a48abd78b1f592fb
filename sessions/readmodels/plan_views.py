"""A plan's view (`plans.plan_view`): its stream folded with its node sessions' starts
and closes, now or as of a moment. Its cost follows its own stream and its nodes'
starts and closes, not their sessions' lengths."""

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import NamedTuple

from django.utils import timezone

from sessions import store
from sessions.domain import budgets, plans, projections, vocabulary
from sessions.domain.records import EventRecord
from sessions.readmodels import plan_graphs
from sessions.readmodels import spend as spend_model
from sessions.readmodels import work as work_model
from sessions.readmodels.kept import Kept


def plan_events(plan_id: str) -> list[EventRecord]:
    """One plan's events, oldest first; empty for no such plan."""
    events = store.read_stream(plan_id)
    return events if events and events[0].type == vocabulary.PLAN_CREATE else []


def plan_view(plan_id: str, at: datetime | None = None) -> plans.PlanView | None:
    """The view of one plan (as of `at`), or None when there is no such plan (by then)."""
    views = plan_views([plan_id], at)
    return views[0] if views else None


def dispatches(sessions: Iterable[str]) -> dict[str, plans.Dispatched]:
    """Which agent runs each of the given sessions that `ct dispatch` launched, and on
    which machine, read off the dispatcher's first note."""
    found = store.first_progress_notes(list(sessions), plans.DISPATCH_NOTE_SEQ_MOST)
    said = ((event.session, plans.dispatched(event)) for event in found)
    return {session: run for session, run in said if run is not None}


def plan_ids(at: datetime | None = None) -> list[str]:
    """Every plan's id (that existed at `at`, if given), the newest first."""
    return store.plan_ids(at)


class _PlanRead(NamedTuple):
    """What a plan's view or summary is worked out from, as read now or as of `at`."""

    plan_id: str
    graph: plans.Graph
    ends: list[EventRecord]  # the plan stream's first and last events (one when the same)
    sessions: list[plans.NodeSession]
    spent: spend_model.PlanUsage


class _Reads(NamedTuple):
    plans: list[_PlanRead]
    liveness: dict[str, plans.Liveness]
    merges: dict[str, dict[str, str | None]]  # by plan
    closed: list[str]  # each node's latest closed session, whose handoffs a view shows


def plan_views(
    plan_ids: Iterable[str] | None = None, at: datetime | None = None
) -> list[plans.PlanView]:
    """Views of the given plans (default: all, newest first), in that order, as of `at`
    if given (those that did not exist yet are left out).

    Now, each costs its stream's ends and its graph kept per process (`plan_graphs`,
    caught up by the rows since), never its history. As of a moment, each plan's events
    up to then are read and folded (history, bounded by the stream's cap)."""
    reads = _read(plan_ids, at)
    found_handoffs = handoffs(reads.closed)
    now = timezone.now() if at is None else at
    views = []
    for read in reads.plans:
        merges = reads.merges[read.plan_id]
        view = plans.plan_view_of(
            read.plan_id,
            read.graph,
            read.ends,
            read.sessions,
            now,
            reads.liveness,
            found_handoffs,
            merges,
        )
        views.append(_with_usage(view, read.spent))
    return views


def plan_summaries(
    plan_ids: Iterable[str] | None = None, at: datetime | None = None
) -> list[plans.PlanSummary]:
    """`plan_views`' plans summed up (`plans.PlanSummary`): no handoffs read, no node's
    ready order or overlaps worked out, so a list costs each plan its states, never
    another plan's space."""
    reads = _read(plan_ids, at)
    now = timezone.now() if at is None else at
    return [
        replace(
            plans.plan_summary_of(
                read.plan_id,
                read.graph,
                read.ends,
                read.sessions,
                now,
                reads.liveness,
                reads.merges[read.plan_id],
            ),
            usage=read.spent.total,
        )
        for read in reads.plans
    ]


def _read(plan_ids: Iterable[str] | None, at: datetime | None) -> _Reads:
    """Each plan's graph, ends, node sessions and spend, and their sessions' liveness
    (a probe or three per unclosed session, never a stream), now or as of `at`."""
    plan_ids = store.plan_ids(at) if plan_ids is None else list(plan_ids)
    if at is not None:
        return _read_as_of(plan_ids, at)
    found: dict[str, tuple[plans.Graph, list[EventRecord]]] = {}
    for plan_id in plan_ids:
        ends = store.stream_ends(plan_id)
        graph = plan_graphs.graph(plan_id) if ends else None
        if graph is not None:
            found[plan_id] = (graph, ends)
    sessions = store.node_sessions_of(list(found))
    read = []
    for plan_id, (graph, ends) in found.items():
        on_nodes = sessions.get(plan_id, [])
        read.append(
            _PlanRead(plan_id, graph, ends, on_nodes, spend_model.plan_usages(plan_id, on_nodes))
        )
    return _with_liveness(read)


def _read_as_of(plan_ids: list[str], at: datetime) -> _Reads:
    streams = store.read_streams(plan_ids)
    sessions = {
        plan_id: plans.sessions_as_of(found, at)
        for plan_id, found in store.node_sessions_of(list(streams)).items()
    }
    totals = spend_model.totals_of((s.session for found in sessions.values() for s in found), at)
    read = []
    for plan_id in plan_ids:
        events = projections.as_of(streams.get(plan_id, []), at)
        found = sessions.get(plan_id, [])
        if events and events[0].type == vocabulary.PLAN_CREATE:
            node_of = {s.session: s.node for s in found}
            spent = spend_model.rolled_up(totals, node_of)
            ends = [events[0], events[-1]]
            read.append(_PlanRead(plan_id, plans.graph_of(events), ends, found, spent))
    return _with_liveness(read, at)


def _with_liveness(read: list[_PlanRead], at: datetime | None = None) -> _Reads:
    """The plans' reads with the liveness of every unclosed node session (now, or as of
    `at`), under `done_when: merge` their done sessions' pull requests, and each node's
    latest closed session."""
    unclosed, closed = [], []
    for plan in read:
        unclosed += [s.session for s in plan.sessions if s.outcome is None]
        closed += [s.session for s in plans.latest_closed(plan.sessions).values()]
    merges = {plan.plan_id: work_model.merges_of(plan.graph, plan.sessions, at) for plan in read}
    return _Reads(read, store.liveness_of(unclosed, at), merges, closed)


def _with_usage(view: plans.PlanView, spent: spend_model.PlanUsage) -> plans.PlanView:
    """`view` with what each node's sessions spent (every attempt), and the plan's; the
    nodes whose budget is spent are not claimable."""
    if not spent.nodes:
        return view
    nodes = [replace(node, usage=spent.nodes.get(node.key)) for node in view.nodes]
    view = replace(view, nodes=nodes, usage=spent.total)
    over = budgets.spent_in_view(view)
    if over:
        view = replace(view, claimable=[key for key in view.claimable if key not in over])
    return view


# A closed session's handoff (its next action and last progress note) never changes:
# nothing is appended after a close. So each process keeps those it has read, and a plan
# view reads only the handoffs of sessions closed since (a 500-node plan's were 2,500
# index probes a view). Kept only when read outside a transaction (committed rows).
HANDOFFS = Kept(bound=20_000)


def handoffs(closed: list[str]) -> plans.Handoffs:
    """The handoffs of the given closed sessions (`store.handoffs_of`), from those kept
    and what is read of the others, each with its session's work as it is now."""
    found = {i: handoff for i in closed if (handoff := HANDOFFS.get(i)) is not None}
    missing = [i for i in closed if i not in found]
    if missing:
        read = store.handoffs_of(missing)
        for session_id, handoff in read.items():
            HANDOFFS.put(session_id, handoff)
        found.update(read)
    works = work_model.works_of(closed) if closed else {}
    return {i: handoff._replace(work=works.get(i)) for i, handoff in found.items()}


def plan_nodes(plan_id: str) -> set[str] | None:
    """The keys of a stored plan's nodes, retired ones included; None for no such plan."""
    graph = plan_graphs.graph(plan_id)
    return set(graph.nodes) if graph is not None else None


def node_brief(plan_id: str, node_key: str) -> str | None:
    """The node's brief now (what an agent is given to do it), or None."""
    graph = plan_graphs.graph(plan_id)
    node = graph.nodes.get(node_key) if graph is not None else None
    return node.brief if node is not None else None


def last_attempt(plan_id: str, node_key: str, before: str | None = None) -> plans.Attempt | None:
    """The node's latest closed session and its handoff (`plans.Attempt`), or None; not
    counting the session `before` (the one a claim just started)."""
    sessions = [
        s for s in store.node_sessions(plan_id) if s.node == node_key and s.session != before
    ]
    latest = plans.latest_closed(sessions).get(node_key)
    return plans.attempt_of(latest, handoffs([latest.session]) if latest is not None else {})


def unclosed_session(plan_id: str, node_key: str) -> str | None:
    """The node's latest unclosed session, or None (a node not running or lapsed)."""
    unclosed = plans.unclosed_by_node(store.node_sessions(plan_id)).get(node_key, [])
    return unclosed[-1] if unclosed else None
