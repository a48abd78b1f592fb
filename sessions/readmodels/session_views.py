"""A session's view: its events projected (`projections.session_view`) at `now`, or as
of a moment. Short streams are read whole; a long one by the few events its view
depends on, with its time in each status from the sums kept per process
(`time_spent`), so a view costs nearly the same at 10 events or 100,000."""

import functools
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Protocol

from django.utils import timezone

from sessions import config, store
from sessions.domain import projections, vocabulary, work
from sessions.domain import touched as touched_paths
from sessions.domain.attention import Facts, attention_of
from sessions.domain.projections import ViewEvents
from sessions.domain.records import EventRecord
from sessions.readmodels import budgets as budget_model
from sessions.readmodels import plan_graphs, time_spent
from sessions.readmodels import spend as spend_model
from sessions.readmodels import work as work_model
from sessions.readmodels.kept import Kept
from sessions.store import space as space_rows

# Streams up to this long are read whole, all of a page's in one query; a longer one is
# read by the events its view depends on (`store.read_view_events`), so that one long
# stream costs a board or a list no more than a short one.
WHOLE_STREAM_LIMIT = 100


class AppendedEvents(Protocol):
    """What an append (`rules.appends.Appended`) read: its event and its view's events
    (`projections.ViewEvents`; None for a repeated key's answer, which read nothing)."""

    event: EventRecord
    view_events: ViewEvents | None


def thresholds(
    stale_after: int | None = None,
    blocked_after: int | None = None,
    review_after: int | None = None,
) -> projections.Thresholds:
    """The attention thresholds, each in minutes from the request or the settings."""
    settings = config.current()
    minutes = (
        settings.stale_after_minutes if stale_after is None else stale_after,
        settings.blocked_attention_minutes if blocked_after is None else blocked_after,
        settings.review_attention_minutes if review_after is None else review_after,
    )
    return _thresholds(minutes)


@functools.lru_cache(maxsize=64)
def _thresholds(minutes: tuple[int, int, int]) -> projections.Thresholds:
    # Every view asks, nearly always with the settings' minutes: made once per minutes.
    return projections.Thresholds(*(timedelta(minutes=m) for m in minutes))


def project(
    session_id: str,
    events: list[EventRecord],
    now: datetime | None = None,
    limits: projections.Thresholds | None = None,
    blocker_count: int | None = None,
    time_spent: dict[str, int] | None = None,
    message_count: int | None = None,
    at: datetime | None = None,
    graphs: dict | None = None,
    whole: bool = True,
) -> projections.SessionView:
    """The view of a session's loaded events, at `now` (default: the clock; as of `at`,
    `at`). A session on a plan's node reads its plan's lease in force then (from
    `graphs`, {plan: graph}, when a page of views has read them once): past it, the
    session has lapsed; and now, the budget binding its node. `whole`: the events are
    the whole stream (else only those the view depends on, and its work is read apart)."""
    now = (at or timezone.now()) if now is None else now
    limits = thresholds() if limits is None else limits
    plan, node = projections.plan_node(events)
    graph = None
    if at is not None:
        lease = plan_graphs.lease(plan, at)
    else:
        graph = graphs[plan] if graphs is not None and plan in graphs else _graph(plan)
        lease = timedelta(minutes=graph.lease) if graph and graph.lease is not None else None
    view = projections.session_view(
        session_id, events, now, limits, blocker_count, time_spent, message_count, lease
    )
    spent = spend_model.usage_of(session_id, events, whole)
    if spent is not None:
        view = replace(view, usage=spent)
    # A long stream's view events hold its latest report of written paths, if any: only
    # then are they all read.
    wrote = whole or any(e.type == vocabulary.PROGRESS and e.paths for e in events)
    written, count = (
        touched_paths.touched(events)
        if whole
        else space_rows.touched(session_id, touched_paths.TOUCHED_SHOWN)
        if wrote
        else ([], 0)
    )
    if count:
        view = replace(view, touched=written, touched_count=count)
    spent_since = None
    if graph is not None and node is not None:
        view, spent_since = _with_budget(view, graph)
    found = work.work(events) if whole else work_model.work_of(session_id, events)
    red_since = None
    if found is not None:
        view = replace(view, work=found)
        red = found.checks is not None and found.checks.state == work.FAILURE
        if red and view.status == vocabulary.IN_REVIEW:
            red_since = (
                work.checks_failed_since(view.status, events)
                if whole
                else work_model.checks_failed_since(session_id, view.status)
            )
    # Decided in one place (`domain.attention`); duplicate work is judged for a page of
    # views at once (`with_duplicates`), which decides again with it.
    facts = Facts(
        view.status,
        projections.attention_since(view.status, events) if view.status else now,
        now,
        limits,
        lease=lease,
        red_since=red_since,
        spent_since=spent_since,
    )
    return replace(view, attention=attention_of(facts), attention_facts=facts)


def with_duplicates(
    views: dict[str, projections.SessionView | None],
) -> dict[str, projections.SessionView | None]:
    """`views` (now, not as of a moment), with the attention `duplicate` on the unclosed
    ones working a repo and branch that an earlier-opened unclosed session works too:
    before red checks and the rest, after lapsed."""
    works = {
        i: view.work
        for i, view in views.items()
        if view is not None and view.work is not None and view.status != vocabulary.CLOSED
    }
    shared = config.current().shared_branches
    placed = [i for i, found in works.items() if work.place(found, shared) is not None]
    found = work_model.duplicates(placed, shared) if placed else {}
    for session_id, duplicate in found.items():
        view = views[session_id]
        if isinstance(view.attention_facts, Facts):
            facts = replace(view.attention_facts, duplicate=duplicate)
            views[session_id] = replace(view, attention=attention_of(facts), attention_facts=facts)
    return views


def _graph(plan_id: str | None) -> object:
    return None if plan_id is None else plan_graphs.graph(plan_id)


def _with_budget(
    view: projections.SessionView, graph: object
) -> tuple[projections.SessionView, datetime | None]:
    """`view` with the budget binding its node now, and since when it has been spent for
    a session not closed (its attention `over_budget`), or None."""
    unclosed = view.status != vocabulary.CLOSED
    found = budget_model.node_budget(view.plan, graph, view.node, since=unclosed)
    if found is None:
        return view, None
    return replace(view, budget=found.budget), found.spent_since


def session_views(
    session_ids: Iterable[str],
    now: datetime | None = None,
    limits: projections.Thresholds | None = None,
    at: datetime | None = None,
) -> dict[str, projections.SessionView | None]:
    """Views of the given sessions that exist, keyed by id; as of `at`, if given, those
    that existed then, as they were."""
    if at is not None:
        return {
            session_id: project(session_id, events, at, limits, at=at)
            for session_id, events in store.streams_as_of(list(session_ids), at).items()
            if events[0].type == vocabulary.START
        }
    now = timezone.now() if now is None else now
    lengths = store.stream_lengths(list(session_ids))
    streams = whole_streams(lengths)
    plans = {projections.plan_node(events)[0] for events in streams.values()} - {None}
    graphs = {plan: _graph(plan) for plan in plans}  # once per plan, not per view
    views = {
        session_id: project(session_id, events, now, limits, graphs=graphs)
        for session_id, events in streams.items()
    }
    for session_id in lengths.keys() - streams.keys():
        views[session_id] = _long_view(session_id, now, limits)
    return with_duplicates(views)


# Short streams by (id, length): a stream's first events never change, so a page of
# views read again (the board polls) reads only the streams that grew since. Kept as
# tuples, shared between threads; bounded to a large board's cards, at most
# `WHOLE_STREAM_LIMIT` events each.
STREAMS = Kept(bound=1_000)


def whole_streams(lengths: dict[str, int]) -> dict[str, list[EventRecord]]:
    """The streams among `lengths` ({id: length}) short enough to read whole, read (or
    as kept, when kept at that length)."""
    found = {}
    for session_id, length in lengths.items():
        if length <= WHOLE_STREAM_LIMIT:
            kept = STREAMS.get((session_id, length))
            found[session_id] = None if kept is None else list(kept)
    missing = [session_id for session_id, events in found.items() if events is None]
    for session_id, events in (store.read_streams(missing) if missing else {}).items():
        STREAMS.put((session_id, len(events)), tuple(events))
        found[session_id] = events
    return {session_id: events for session_id, events in found.items() if events is not None}


def _long_view(
    session_id: str,
    now: datetime,
    limits: projections.Thresholds | None,
    view_events: ViewEvents | None = None,
) -> projections.SessionView | None:
    """A view from the events it depends on (read, unless given), and the time spans
    summed in SQL."""
    if view_events is None:
        view_events = store.read_view_events(session_id, vocabulary.MAX_BLOCKERS_SHOWN)
    events, blocker_count, message_count = view_events
    if not events or events[0].type != vocabulary.START:  # none, or a plan's id
        return None
    last = projections.last_transition(events)
    spent = projections.time_in_state_from(time_spent.spans(session_id, last), last, now)
    return project(
        session_id, events, now, limits, blocker_count, spent, message_count, whole=False
    )


def session_view(
    session_id: str,
    now: datetime | None = None,
    limits: projections.Thresholds | None = None,
    at: datetime | None = None,
) -> projections.SessionView | None:
    """The view of one session, or None when it has no events (or none by `at`).

    It reads only the events the view depends on and sums the time in each status in
    SQL, so it costs nearly the same whatever the stream's length. As of `at`, it reads
    the stream up to then (bounded by the stream's cap) and is computed at `now = at`.
    """
    if at is not None:
        events = projections.as_of(session_events(session_id), at)
        return project(session_id, events, at, limits, at=at) if events else None
    view = _long_view(session_id, timezone.now() if now is None else now, limits)
    return with_duplicates({session_id: view})[session_id]


def appended_view(appended: AppendedEvents) -> projections.SessionView | None:
    """The view of the session an append wrote to, from the events the append read; a
    repeated key's answer reads the session as it is now."""
    session_id = appended.event.session
    if appended.view_events is None:
        return session_view(session_id)
    view = _long_view(session_id, timezone.now(), None, appended.view_events)
    return with_duplicates({session_id: view})[session_id]


def first_event(stream_id: str) -> EventRecord | None:
    """A session's or plan's first event (its title and owner), or None."""
    ends = store.stream_ends(stream_id)
    return ends[0] if ends else None


def session_events(session_id: str) -> list[EventRecord]:
    """One session's events as `EventRecord`s, oldest first; empty for no such session."""
    events = store.read_stream(session_id)
    return events if events and events[0].type == vocabulary.START else []
