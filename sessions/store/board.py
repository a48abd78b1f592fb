"""The board's and the session list's reads: which sessions may be on the board, each
one's status off its last event (the last transition wins, as `projections.status`
says), and the list's filters. The ORM builds the statements here; the board's runs
prepared, and rows come out as tuples."""

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from django.db.models import Exists, Max, OuterRef, Q, QuerySet, Subquery

from sessions.domain import vocabulary
from sessions.domain.projections import Thresholds
from sessions.models import Event
from sessions.store.database import (
    json_array_rows,
    latest_read,
    likely,
    moment_param,
    moment_read,
    run_prepared,
    walking_an_index,
)


class BoardRow(NamedTuple):
    session: str
    status: str
    last_at: datetime  # its last activity (its last event that is not a message)
    changed_at: datetime  # its last transition (what set its status)
    plan: str | None  # the plan whose node it works on


# The types whose event, when last, leaves a session in each status.
LAST_TYPES = {
    status: [t for t, after in vocabulary.STATUS_AFTER.items() if after == status]
    for status in vocabulary.STATUSES
}


def newest_position() -> int:
    """Changes exactly when an event is appended: the newest event's id."""
    return Event.objects.aggregate(newest=Max("id"))["newest"] or 0


def _starts(owner: str | None = None, text: str | None = None) -> QuerySet:
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


def board_rows(
    owner: str | None,
    text: str | None,
    closed_since: datetime,
    held: Collection[str],
    watermark: int,
) -> list[BoardRow]:
    """(session id, status, last event's time), newest activity first, of the sessions
    that may be open or closed since `closed_since`: those `held` open at or below the
    position `watermark` (the open-sessions model's), those started above it, and those
    closed lately; narrowed by owner and by text in the title or id."""
    candidates = _CANDIDATES.format(held=json_array_rows())
    rows = _starts(owner, text).extra(
        where=[
            candidates,
            _NOT_CLOSED_BEFORE.format(closed_before=likely("timestamp < %s")),
        ],
        params=[
            json.dumps(list(held)),
            watermark,
            moment_param(closed_since),
            watermark,
            moment_param(closed_since),
        ],
    )
    return _status_rows(rows, Event.objects.all())


def _status_rows(start_rows: QuerySet, happened: QuerySet) -> list[BoardRow]:
    """Start rows with their stream's last transition and last progress among the
    events `happened`, as `BoardRow`s, newest activity first. Each is one probe of a
    partial index, however many heartbeats and messages the stream holds."""
    mine = happened.filter(session=OuterRef("session")).order_by("-seq")
    transition = mine.filter(type__in=vocabulary.TRANSITIONS)
    # One probe per type that keeps a worker alive (an `IN` would sort them all).
    kept_alive = {
        f"kept_alive_{n}": Subquery(mine.filter(type=kind).values("timestamp")[:1])
        for n, kind in enumerate(vocabulary.KEEPALIVE_TYPES)
    }
    rows = start_rows.annotate(
        last_type=Subquery(transition.values("type")[:1]),
        changed_at=Subquery(transition.values("timestamp")[:1]),
        **kept_alive,
    ).values_list("session", "last_type", "changed_at", "plan", *kept_alive)
    # Run as a hot statement (prepared on PostgreSQL, and read without Django's
    # per-value converters: at 1,000 open sessions they were a third of the call).
    sql, params = rows.query.sql_with_params()
    found = []
    for session_id, kind, changed_at, plan, *alive_at in run_prepared(sql, params):
        changed_at = moment_read(changed_at)
        last_at = latest_read(changed_at, *alive_at)
        found.append(BoardRow(session_id, vocabulary.STATUS_AFTER[kind], last_at, changed_at, plan))
    found.sort(key=lambda row: (-row.last_at.timestamp(), row.session))
    return found


def board_rows_as_of(
    owner: str | None, text: str | None, at: datetime, closed_since: datetime
) -> list[BoardRow]:
    """`board_rows` as the board was at `at`: the sessions started by then and not closed
    before `closed_since`, each with its status and last event as of `at`. History is
    never rewritten, so this is exact; it reads every session started by `at` that was
    not closed long before it (the open-sessions model knows only the present)."""
    closed_earlier = Event.objects.filter(
        session=OuterRef("session"), type=vocabulary.CLOSE, timestamp__lt=closed_since
    )
    rows = _starts(owner, text).filter(timestamp__lte=at).exclude(Exists(closed_earlier))
    return _status_rows(rows, Event.objects.filter(timestamp__lte=at))


@dataclass(frozen=True)
class SessionQuery:
    """What a list of sessions asks: its filters, the moment it is as of, and its page."""

    owner: str | None = None
    text: str | None = None  # found in the title or the owner's name
    status: str | None = None
    stale: bool | None = None
    attention: bool | None = None  # the read model's to decide (`domain.attention`)
    at: datetime | None = None  # as of this moment; None: now
    offset: int = 0
    limit: int | None = None  # None: all


def listing(
    query: SessionQuery, now: datetime, limits: Thresholds, excluded: Sequence[str] = ()
) -> list[str]:
    """Session ids, newest activity first, narrowed as `query` asks: `limit` of them
    (default: all) from the `offset`-th.

    Walks events newest first and keeps each session's last activity (its last event
    that is not a message: no later one in its stream), so a page costs the events it
    passes over, not the whole history; each kept row's status is its stream's last
    transition (one probe of a partial index), which gives the status filter, and with
    the activity's time the stale filter: `stale` (True or False) keeps the sessions that
    are, or are not, stale at `now` with `limits` (`projections.is_stale`). The sessions
    `excluded` are left out (those that need attention, for the list of those that do not:
    attention is decided in one place, `domain.attention`). As of `at`, the same over the
    events that had happened by then, with `now = at`.
    """
    owner, text, status, stale, at = query.owner, query.text, query.status, query.stale, query.at
    happened = Event.objects.all() if at is None else Event.objects.filter(timestamp__lte=at)
    activity = happened.filter(type__in=vocabulary.ACTIVITY_TYPES)
    # Session streams only: a plan's events are not a session's activity. Each row is kept
    # when it is its stream's latest activity, asked as a scalar subquery (one backward
    # index probe a row) rather than "no later activity exists": PostgreSQL turns that
    # into an anti-join, and with statistics of a table it thinks tiny (never analysed,
    # autovacuum behind a bulk import) joined every row to a scan of the whole table:
    # 2.8 s for the first page at 300,000 events (bench/session_list.py).
    latest = activity.filter(session=OuterRef("session")).order_by("-seq").values("seq")[:1]
    tails = activity.filter(seq=Subquery(latest))
    transition = happened.filter(
        session=OuterRef("session"), type__in=vocabulary.TRANSITIONS
    ).order_by("-seq")
    tails = tails.annotate(
        status_type=Subquery(transition.values("type")[:1]),
        changed_at=Subquery(transition.values("timestamp")[:1]),
    )
    if owner or text:
        tails = tails.filter(session__in=_starts(owner, text).values("session"))
    if status is not None:
        tails = tails.filter(status_type__in=LAST_TYPES[status])
    quiet = Q(status_type__in=LAST_TYPES[vocabulary.ACTIVE], timestamp__lt=now - limits.stale)
    if stale is not None:
        tails = tails.filter(quiet) if stale else tails.exclude(quiet)
    if excluded:
        tails = tails.exclude(session__in=list(excluded))
    ids = tails.order_by("-timestamp", "-id").values_list("session", flat=True)
    with walking_an_index():
        offset, limit = query.offset, query.limit
        return list(ids[offset:] if limit is None else ids[offset : offset + limit])
