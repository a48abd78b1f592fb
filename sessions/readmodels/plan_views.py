"""A plan's view (`plans.plan_view`): its stream folded with its node sessions' starts
and closes, now or as of a moment. Its cost follows its own stream and its nodes'
starts and closes, not their sessions' lengths."""

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime

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


def plan_ids(at: datetime | None = None) -> list[str]:
    """Every plan's id (that existed at `at`, if given), the newest first."""
    return store.plan_ids(at)


def plan_views(
    plan_ids: Iterable[str] | None = None, at: datetime | None = None
) -> list[plans.PlanView]:
    """Views of the given plans (default: all, newest first), in that order, as of `at`
    if given (those that did not exist yet are left out).

    Now, each costs its stream's ends and its graph kept per process (`plan_graphs`,
    caught up by the rows since), never its history. As of a moment, each plan's events
    up to then are read and folded (history, bounded by the stream's cap)."""
    plan_ids = store.plan_ids(at) if plan_ids is None else list(plan_ids)
    if at is not None:
        return _plan_views_as_of(plan_ids, at)
    now = timezone.now()
    found: dict[str, tuple[plans.Graph, list[EventRecord]]] = {}
    for plan_id in plan_ids:
        ends = store.stream_ends(plan_id)
        graph = plan_graphs.graph(plan_id) if ends else None
        if graph is not None:
            found[plan_id] = (graph, ends)
    sessions = store.node_sessions_of(list(found))
    liveness, handoffs = _liveness_and_handoffs(sessions.values())
    views = []
    for plan_id, (graph, ends) in found.items():
        on_nodes = sessions.get(plan_id, [])
        merges = work_model.merges_of(graph, on_nodes)
        view = plans.plan_view_of(plan_id, graph, ends, on_nodes, now, liveness, handoffs, merges)
        views.append(_with_usage(view, spend_model.plan_usages(plan_id, on_nodes)))
    return views


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


def _liveness_and_handoffs(
    node_sessions: Iterable[list[plans.NodeSession]], at: datetime | None = None
) -> tuple[dict[str, plans.Liveness], plans.Handoffs]:
    """The liveness of every unclosed node session (now, or as of `at`), and the handoff
    of each node's latest closed session: a probe or three per session, never a stream."""
    unclosed, closed = [], []
    for sessions in node_sessions:
        unclosed += [s.session for s in sessions if s.outcome is None]
        closed += [s.session for s in plans.latest_closed(sessions).values()]
    return store.liveness_of(unclosed, at), handoffs(closed)


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


def _plan_views_as_of(plan_ids: list[str], at: datetime) -> list[plans.PlanView]:
    streams = store.read_streams(plan_ids)
    sessions = {
        plan_id: plans.sessions_as_of(found, at)
        for plan_id, found in store.node_sessions_of(list(streams)).items()
    }
    liveness, handoffs = _liveness_and_handoffs(sessions.values(), at)
    totals = spend_model.totals_of((s.session for found in sessions.values() for s in found), at)
    views = []
    for plan_id in plan_ids:
        events = projections.as_of(streams.get(plan_id, []), at)
        found = sessions.get(plan_id, [])
        if events and events[0].type == vocabulary.PLAN_CREATE:
            merges = work_model.merges_of(plans.graph_of(events), found, at)
            view = plans.plan_view(plan_id, events, found, at, liveness, handoffs, merges)
            node_of = {s.session: s.node for s in found}
            views.append(_with_usage(view, spend_model.rolled_up(totals, node_of)))
    return views


def plan_nodes(plan_id: str) -> set[str] | None:
    """The keys of a stored plan's nodes, retired ones included; None for no such plan."""
    graph = plan_graphs.graph(plan_id)
    return set(graph.nodes) if graph is not None else None


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
