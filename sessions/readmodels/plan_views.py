"""A plan's view (`plans.plan_view`): its stream folded with its node sessions' starts
and closes, now or as of a moment. Its cost follows its own stream and its nodes'
starts and closes, not their sessions' lengths."""

from collections.abc import Iterable
from datetime import datetime

from sessions import store
from sessions.domain import plans, projections, vocabulary
from sessions.domain.records import EventRecord


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
    if given (those that did not exist yet are left out)."""
    plan_ids = store.plan_ids(at) if plan_ids is None else list(plan_ids)
    streams = store.read_streams(plan_ids)
    sessions = store.node_sessions_of(list(streams))
    views = []
    for plan_id in plan_ids:
        events, found = streams.get(plan_id, []), sessions.get(plan_id, [])
        if at is not None:
            events, found = projections.as_of(events, at), plans.sessions_as_of(found, at)
        if events and events[0].type == vocabulary.PLAN_CREATE:
            views.append(plans.plan_view(plan_id, events, found))
    return views


def plan_nodes(plan_id: str) -> set[str] | None:
    """The keys of a stored plan's nodes, retired ones included; None for no such plan."""
    events = plan_events(plan_id)
    return set(plans.graph_of(events).nodes) if events else None
