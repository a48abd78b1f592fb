"""The read side: load streams from the event table and project them into views.

The board looks only at the sessions that may be open or lately closed, which the
open-sessions model names (`open_sessions`), so a long closed history costs nothing there.
The board's columns and the API list's filters read each session's status off its last
event in SQL (the last transition wins); what is shown is always computed by
`projections` from the loaded streams.
"""

import json
import threading
from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db.models import Exists, Max, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from . import metrics as flow_metrics
from . import open_sessions, plans, projections, store, time_spent, vocabulary
from .models import Event

# The types whose event, when last, leaves a session in each status.
LAST_TYPES = {
    status: [t for t, after in vocabulary.STATUS_AFTER.items() if after == status]
    for status in vocabulary.STATUSES
}


def version():
    """Changes exactly when an event is appended: the newest event's id."""
    return Event.objects.aggregate(newest=Max("id"))["newest"] or 0


def thresholds(stale_after=None, blocked_after=None, review_after=None):
    """The attention thresholds, each in minutes from the request or the settings."""
    minutes = (
        settings.STALE_AFTER_MINUTES if stale_after is None else stale_after,
        settings.BLOCKED_ATTENTION_MINUTES if blocked_after is None else blocked_after,
        settings.REVIEW_ATTENTION_MINUTES if review_after is None else review_after,
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
        return _views_as_of(session_ids, at, limits)
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
    events = Event.objects.stream(session_id)
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


def events_page(session_id, after, limit):
    """Up to `limit` of a session's events with a seq above `after`, oldest first (seqs
    have no gaps, so this is a range of them)."""
    return Event.objects.filter(session=session_id, seq__gt=after, seq__lte=after + limit).records()


def exists(session_id):
    """Whether there is a session with this id (not a plan)."""
    return Event.objects.filter(session=session_id, seq=1, type=vocabulary.START).exists()


def starts(owner=None, text=None):
    """Start rows, one per session, narrowed by owner and by text in the title or id."""
    rows = Event.objects.filter(type=vocabulary.START)
    if owner:
        rows = rows.filter(actor=owner)
    if text:
        rows = rows.filter(Q(title__icontains=text) | Q(session__icontains=text))
    return rows


# Of the candidates below, only a session held by the model can have closed before the
# cut-off, and only above the watermark (the model dropped the closes below it): so the
# few closes above the watermark are looked up once, not one probe per candidate.
_NOT_CLOSED_BEFORE = (
    "tower_event.session NOT IN (SELECT session FROM tower_event"
    f" WHERE type = '{vocabulary.CLOSE}' AND id > %s AND {{closed_before}})"
)
# Sessions that may be open or recently closed: those the open-sessions model holds (a
# JSON array), those started above its watermark and never closed, those closed lately.
# (One started at or below the watermark is held until the model sees its close.)
_CANDIDATES = (
    "tower_event.session IN ({held}"
    f" UNION SELECT s.session FROM tower_event s WHERE s.type = '{vocabulary.START}'"
    " AND s.id > %s AND NOT EXISTS (SELECT 1 FROM tower_event c"
    f" WHERE c.type = '{vocabulary.CLOSE}' AND c.session = s.session)"
    f" UNION SELECT session FROM tower_event WHERE type = '{vocabulary.CLOSE}'"
    " AND timestamp >= %s)"
)


def board_rows(owner, text, closed_since, at=None):
    """(session id, status, last event's time) of every open session and of those closed
    since `closed_since`, newest activity first; as the board was at `at`, if given.

    Only the sessions that may qualify are looked at (`open_sessions`), never the whole
    closed history. The status is read off each session's last event in SQL, by the same
    rule as `projections.status` (the last transition wins), so that only the cards shown
    need their events loaded.
    """
    if at is not None:
        return _board_rows_as_of(owner, text, at, closed_since)
    held, watermark = open_sessions.below_watermark()
    candidates = _CANDIDATES.format(held=store.json_array_rows())
    last = Event.objects.filter(session=OuterRef("session")).order_by("-seq")
    rows = starts(owner, text).extra(
        where=[
            candidates,
            _NOT_CLOSED_BEFORE.format(closed_before=store.likely("timestamp < %s")),
        ],
        params=[
            json.dumps(list(held)),
            watermark,
            store.moment_param(closed_since),
            watermark,
            store.moment_param(closed_since),
        ],
    )
    return _status_rows(rows, last)


def _status_rows(start_rows, last):
    """Start rows with their stream's last event (`last`, newest first, correlated on
    the session) as (session id, status, last event's time), newest activity first."""
    rows = (
        start_rows.annotate(
            last_type=Subquery(last.values("type")[:1]),
            last_at=Subquery(last.values("timestamp")[:1]),
        )
        .order_by("-last_at", "session")
        .values_list("session", "last_type", "last_at")
    )
    # Run as a hot statement (prepared on PostgreSQL, and read without Django's
    # per-value converters: at 1,000 open sessions they were a third of the call).
    sql, params = rows.query.sql_with_params()
    return [
        (session_id, vocabulary.STATUS_AFTER[kind], store.moment_read(last_at))
        for session_id, kind, last_at in store.run_prepared(sql, params)
    ]


def _board_rows_as_of(owner, text, at, closed_since):
    """`board_rows` as the board was at `at`: the sessions started by then and not closed
    before `closed_since`, each with its status and last event as of `at`. History is
    never rewritten, so this is exact; it reads every session started by `at` that was
    not closed long before it (the open-sessions model knows only the present)."""
    as_of = Event.objects.filter(session=OuterRef("session"), timestamp__lte=at).order_by("-seq")
    closed_earlier = Event.objects.filter(
        session=OuterRef("session"), type=vocabulary.CLOSE, timestamp__lt=closed_since
    )
    rows = starts(owner, text).filter(timestamp__lte=at).exclude(Exists(closed_earlier))
    return _status_rows(rows, as_of)


def _views_as_of(session_ids, at, limits):
    """Views of the given sessions as they were at `at` (computed at `now = at`)."""
    streams = defaultdict(list)
    for record in Event.objects.filter(session__in=list(session_ids), timestamp__lte=at).records():
        streams[record.session].append(record)
    return {
        session_id: project(session_id, events, at, limits)
        for session_id, events in streams.items()
        if events[0].type == vocabulary.START
    }


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
_LINES: dict[tuple, projections.AttentionLine] = {}
_LINES_KEPT = 1000
_lines_lock = threading.Lock()


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
    with _lines_lock:
        lines = {i: _LINES[key] for i, key in keys.items() if key in _LINES}
    missing = {i: length for i, length in lengths.items() if i not in lines}
    streams = _whole_streams(missing)
    for session_id in missing.keys() - streams.keys():
        streams[session_id] = store.read_view_events(session_id, vocabulary.MAX_BLOCKERS_SHOWN)[0]
    found = {i: projections.attention_line(i, events) for i, events in streams.items()}
    with _lines_lock:
        for session_id, line in found.items():
            _LINES[keys[session_id]] = line
        while len(_LINES) > _LINES_KEPT:
            del _LINES[next(iter(_LINES))]
    return {**lines, **found}


def listing(
    owner=None, text=None, status=None, stale=None, attention=None, now=None, limits=None, at=None
):
    """Session ids, newest activity first, narrowed as asked (a queryset to slice).

    Walks events newest first and keeps each session's last one (no later event in its
    stream), so a page costs the events it passes over, not the whole history: the last
    event also gives the status filter (the last transition wins), the stale filter and
    the attention filter. `stale` and `attention` (True or False) keep the sessions that
    are, or are not, stale or in need of attention at `now` with `limits`, by the rules
    of `projections.is_stale` and `projections.attention`. As of `at`, the same over the
    events that had happened by then, with `now = at`.
    """
    now = at if at is not None else timezone.now() if now is None else now
    limits = thresholds() if limits is None else limits
    happened = Event.objects.all() if at is None else Event.objects.filter(timestamp__lte=at)
    later = happened.filter(session=OuterRef("session"), seq__gt=OuterRef("seq"))
    # Session streams only: a plan's last event is a plan event.
    tails = happened.filter(~Exists(later), type__in=vocabulary.EVENT_TYPES)
    if owner or text:
        tails = tails.filter(session__in=starts(owner, text).values("session"))
    if status is not None:
        tails = tails.filter(type__in=LAST_TYPES[status])
    quiet = Q(type__in=LAST_TYPES[vocabulary.ACTIVE], timestamp__lt=now - limits.stale)
    if stale is not None:
        tails = tails.filter(quiet) if stale else tails.exclude(quiet)
    if attention is not None:
        # Blocked since the first block after the last unblock (the run's start).
        last_unblock = (
            happened.filter(session=OuterRef(OuterRef("session")), type=vocabulary.UNBLOCK)
            .order_by("-seq")
            .values("seq")[:1]
        )
        early_block = Event.objects.filter(
            session=OuterRef("session"),
            type=vocabulary.BLOCK,
            timestamp__lt=now - limits.blocked,
            seq__gt=Coalesce(Subquery(last_unblock), 0),
        )
        needs = (
            quiet
            | Q(type=vocabulary.REVIEW, timestamp__lt=now - limits.review)
            | Q(Exists(early_block), type=vocabulary.BLOCK)
        )
        tails = tails.filter(needs) if attention else tails.exclude(needs)
    return tails.order_by("-timestamp", "-id").values_list("session", flat=True)


# The feed -----------------------------------------------------------------------------


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
