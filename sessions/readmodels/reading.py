"""The read side: load streams from the event table and project them into views.

The board looks only at the sessions that may be open or lately closed, which the
open-sessions model names (`open_sessions`), so a long closed history costs nothing there.
The board's columns and the API list's filters read each session's status off its last
event in SQL (the last transition wins); what is shown is always computed by
`projections` from the loaded streams.
"""

from datetime import timedelta

from django.utils import timezone

from sessions import config, store
from sessions.domain import metrics as flow_metrics
from sessions.domain import plans, projections, vocabulary
from sessions.readmodels import open_sessions, time_spent
from sessions.readmodels.kept import Kept, always


def version():
    """Changes exactly when an event is appended: the newest event's id."""
    return store.newest_position()


def thresholds(stale_after=None, blocked_after=None, review_after=None):
    """The attention thresholds, each in minutes from the request or the settings."""
    minutes = (
        config.current().stale_after_minutes if stale_after is None else stale_after,
        config.current().blocked_attention_minutes if blocked_after is None else blocked_after,
        config.current().review_attention_minutes if review_after is None else review_after,
    )
    return projections.Thresholds(*(timedelta(minutes=m) for m in minutes))


def project(session_id, events, now=None, limits=None, blocker_count=None, time_spent=None):
    """The view of a session's loaded events, at `now` (default: the clock)."""
    now = timezone.now() if now is None else now
    limits = thresholds() if limits is None else limits
    return projections.session_view(session_id, events, now, limits, blocker_count, time_spent)


# Streams up to this long are read whole, all of a page's in one query; a longer one is
# read by the events its view depends on (`store.read_view_events`), so that one long
# stream costs a board or a list no more than a short one.
WHOLE_STREAM_LIMIT = 100


def session_views(session_ids, now=None, limits=None, at=None):
    """Views of the given sessions that exist, keyed by id; as of `at`, if given, those
    that existed then, as they were."""
    if at is not None:
        return {
            session_id: project(session_id, events, at, limits)
            for session_id, events in store.streams_as_of(list(session_ids), at).items()
            if events[0].type == vocabulary.START
        }
    now = timezone.now() if now is None else now
    lengths = store.stream_lengths(list(session_ids))
    streams = _whole_streams(lengths)
    views = {
        session_id: project(session_id, events, now, limits)
        for session_id, events in streams.items()
    }
    for session_id in lengths.keys() - streams.keys():
        views[session_id] = _long_view(session_id, now, limits)
    return views


def _whole_streams(lengths):
    """The streams among `lengths` ({id: length}) short enough to read whole, read."""
    short = [i for i, length in lengths.items() if length <= WHOLE_STREAM_LIMIT]
    return store.read_streams(short) if short else {}


def _long_view(session_id, now, limits, view_events=None):
    """A view from the events it depends on (read, unless given), and the time spans
    summed in SQL."""
    if view_events is None:
        view_events = store.read_view_events(session_id, vocabulary.MAX_BLOCKERS_SHOWN)
    events, blocker_count = view_events
    if not events or events[0].type != vocabulary.START:  # none, or a plan's id
        return None
    spent = projections.time_in_state_from(
        time_spent.spans(session_id, events[-1]), events[-1], now
    )
    return project(session_id, events, now, limits, blocker_count, spent)


def session_view(session_id, now=None, limits=None, at=None):
    """The view of one session, or None when it has no events (or none by `at`).

    It reads only the events the view depends on and sums the time in each status in
    SQL, so it costs nearly the same whatever the stream's length. As of `at`, it reads
    the stream up to then (bounded by the stream's cap) and is computed at `now = at`.
    """
    if at is not None:
        events = projections.as_of(session_events(session_id), at)
        return project(session_id, events, at, limits) if events else None
    return _long_view(session_id, timezone.now() if now is None else now, limits)


def appended_view(appended):
    """The view of the session an append (`append.Appended`) wrote to, from the events
    the append read; a repeated key's answer reads the session as it is now."""
    session_id = appended.event.session
    if appended.view_events is None:
        return session_view(session_id)
    return _long_view(session_id, timezone.now(), None, appended.view_events)


def title(stream_id):
    """The title a session or plan was started with (its first event's), or None."""
    ends = store.stream_ends(stream_id)
    return ends[0].title if ends else None


def session_events(session_id):
    """One session's events as `EventRecord`s, oldest first; empty for no such session."""
    events = store.read_stream(session_id)
    return events if events and events[0].type == vocabulary.START else []


# Plans --------------------------------------------------------------------------------


def plan_events(plan_id):
    """One plan's events, oldest first; empty for no such plan."""
    events = store.read_stream(plan_id)
    return events if events and events[0].type == vocabulary.PLAN_CREATE else []


def plan_view(plan_id, at=None):
    """The view of one plan (as of `at`), or None when there is no such plan (by then).
    Its cost follows its own stream and its nodes' starts and closes, not their
    sessions' lengths."""
    views = plan_views([plan_id], at)
    return views[0] if views else None


def plan_ids(at=None):
    """Every plan's id (that existed at `at`, if given), the newest first."""
    return store.plan_ids(at)


def plan_views(plan_ids=None, at=None):
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


def plan_nodes(plan_id):
    """The keys of a stored plan's nodes, retired ones included; None for no such plan."""
    events = plan_events(plan_id)
    return set(plans.graph_of(events).nodes) if events else None


def board_rows(owner, text, closed_since, at=None):
    """(session id, status, last event's time) of every open session and of those closed
    since `closed_since`, newest activity first; as the board was at `at`, if given.

    Only the sessions that may qualify are looked at (`open_sessions`), never the whole
    closed history. The status is read off each session's last event in SQL, by the same
    rule as `projections.status` (the last transition wins), so that only the cards shown
    need their events loaded.
    """
    if at is not None:
        return store.board_rows_as_of(owner, text, at, closed_since)
    held, watermark = open_sessions.below_watermark()
    return store.board_rows(owner, text, closed_since, held, watermark)


def needing_attention(rows, now, limits, at=None):
    """Of board rows, the sessions that need a person now, longest overdue first, as
    (session id, `projections.Attention`): the rule of `projections.attention`, with
    where each blocked run began kept by the open-sessions model, or, for rows as of a
    moment `at`, read in one query."""
    if at is None:
        run_starts = open_sessions.blocked_runs()
    else:
        blocked = [session_id for session_id, status, _ in rows if status == vocabulary.BLOCKED]
        run_starts = store.blocked_run_starts(blocked, at) if blocked else {}
    before = projections.overdue_before(now, limits)
    found = []
    for session_id, status, last_at in rows:
        if status not in before:  # closed
            continue
        since = run_starts.get(session_id, last_at) if status == vocabulary.BLOCKED else last_at
        if since < before[status]:
            found.append((since - before[status], session_id, status, since))
    found.sort()  # the longest overdue (the most before its cut-off) first
    return [
        (session_id, projections.Attention(projections.ATTENTION_OF[status][0], since))
        for _, session_id, status, since in found
    ]


# Strip lines by (session, last seq, last event's time): a stream's events up to a seq
# never change, so neither does its line, and the strip's sessions are mostly the same
# from one poll to the next. Bounded; an entry costs a few hundred bytes.
# Keyed by the row they were read up to, so kept always.
LINES = Kept(bound=1000, keep_when=always)


def attention_lines(last_events, at=None):
    """The strip's lines (`projections.attention_line`) of the sessions given as
    {session id: its last event's time}, keyed by id; as of `at`, if given."""
    if not last_events:
        return {}
    if at is not None:
        streams = store.read_streams(list(last_events))
        return {
            session_id: projections.attention_line(session_id, projections.as_of(events, at))
            for session_id, events in streams.items()
        }
    lengths = store.stream_lengths(list(last_events))
    keys = {i: (i, seq, last_events[i]) for i, seq in lengths.items()}
    lines = {i: line for i, key in keys.items() if (line := LINES.get(key)) is not None}
    missing = {i: length for i, length in lengths.items() if i not in lines}
    streams = _whole_streams(missing)
    for session_id in missing.keys() - streams.keys():
        streams[session_id] = store.read_view_events(session_id, vocabulary.MAX_BLOCKERS_SHOWN)[0]
    found = {i: projections.attention_line(i, events) for i, events in streams.items()}
    for session_id, line in found.items():
        LINES.put(keys[session_id], line)
    return {**lines, **found}


# The feed -----------------------------------------------------------------------------


def listing(
    owner=None, text=None, status=None, stale=None, attention=None, now=None, limits=None, at=None
):
    """Session ids, newest activity first, narrowed as asked (a queryset to slice):
    `store.listing` at `now` (default: the clock; as of `at`, `at`) with `limits`
    (default: the settings')."""
    now = at if at is not None else timezone.now() if now is None else now
    limits = thresholds() if limits is None else limits
    return store.listing(owner, text, status, stale, attention, now, limits, at)


def feed(after, limit, event_type=None, stream=None, plan=None):
    """(up to `limit` events after the position `after`, each as (position, record),
    the position to ask after next). Events are given only up to the safe position, so
    a consumer that keeps `next_after` never misses or repeats one, however the writers
    race; a narrowed feed moves its cursor past the rows it skipped."""
    up_to = open_sessions.safe_position()
    found = store.read_feed(after, up_to, limit, event_type=event_type, stream=stream, plan=plan)
    next_after = found[-1][0] if len(found) == limit else max(after, up_to)
    return found, next_after


# Metrics ------------------------------------------------------------------------------


def metrics(since, until):
    """The flow metrics of `[since, until)`, folded in SQL over the sessions open at some
    moment of the window or closed in it (`metrics.metrics` over their streams is the
    reference it must equal), and a count of those closed before it."""
    closed, changes = store.flow_folds(since, until)
    return flow_metrics.metrics_from_folds(
        since, until, closed, changes, store.closed_before(since)
    )
