"""The board's read model: which sessions it shows and in which column, which need a
person (the Needs attention strip), and the strip's lines.

The board looks only at the sessions that may be open or lately closed, which the
open-sessions model names (`open_sessions`), so a long closed history costs nothing
there. Each column's status is read off each session's last event in SQL (the last
transition wins); what a card shows is always computed by `projections`.
"""

from collections.abc import Sequence
from datetime import datetime

from django.utils import timezone

from sessions import config, store
from sessions.domain import projections, vocabulary
from sessions.domain.attention import Facts, decide
from sessions.readmodels import budgets as budget_model
from sessions.readmodels import open_sessions, plan_graphs
from sessions.readmodels import work as work_model
from sessions.readmodels.kept import Kept, always
from sessions.readmodels.session_views import thresholds, whole_streams
from sessions.store.board import BoardRow


def version() -> int:
    """Changes exactly when an event is appended: the newest event's id."""
    return store.newest_position()


def board_rows(
    owner: str | None, text: str | None, closed_since: datetime, at: datetime | None = None
) -> list[BoardRow]:
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


def needing_attention(
    rows: Sequence[BoardRow],
    now: datetime,
    limits: projections.Thresholds,
    at: datetime | None = None,
) -> list[tuple[str, projections.Attention]]:
    """Of board rows, the sessions that need a person now, longest overdue first, as
    (session id, `projections.Attention`): the rule of `projections.attention`, with
    where each blocked run began kept by the open-sessions model, or, for rows as of a
    moment `at`, read in one query."""
    if at is None:
        run_starts = open_sessions.blocked_runs()
    else:
        blocked = [row.session for row in rows if row.status == vocabulary.BLOCKED]
        run_starts = store.blocked_run_starts(blocked, at) if blocked else {}
    open_rows = [row.session for row in rows if row.status != vocabulary.CLOSED]
    if at is None:
        marks = open_sessions.work_marks()
        failing = marks.failing
        duplicates = work_model.duplicates(
            open_rows, config.current().shared_branches, marks.places
        )
    else:  # red checks and duplicate work are judged now only
        failing, duplicates = {}, {}
    plans = {row.plan for row in rows if row.plan is not None and row.status == vocabulary.ACTIVE}
    leases = {plan: plan_graphs.lease(plan, at) for plan in plans}
    spent = {} if at is not None else budget_model.spent_sessions(rows)
    found = []
    for row in rows:
        if row.status == vocabulary.CLOSED:
            continue
        since = {
            vocabulary.ACTIVE: row.last_at,
            vocabulary.BLOCKED: run_starts.get(row.session, row.changed_at),
            vocabulary.IN_REVIEW: row.changed_at,
        }[row.status]
        facts = Facts(
            row.status,
            since,
            now,
            limits,
            lease=leases.get(row.plan) if row.status == vocabulary.ACTIVE else None,
            red_since=failing.get(row.session),
            duplicate=duplicates.get(row.session),
            spent_since=spent.get(row.session),
        )
        overdue = decide(facts)
        if overdue is not None:
            found.append((overdue.attention.since - overdue.cut_off, row.session, overdue))
    found.sort(key=lambda item: item[:2])  # the longest overdue (most before its cut-off)
    return [(session_id, overdue.attention) for _, session_id, overdue in found]


# Strip lines by (session, last seq, last event's time): a stream's events up to a seq
# never change, so neither does its line, and the strip's sessions are mostly the same
# from one poll to the next. Keyed by the row they were read up to, so kept always.
# Bounded; an entry costs a few hundred bytes.
LINES = Kept(bound=1000, keep_when=always)


def attention_lines(
    last_events: dict[str, datetime], at: datetime | None = None
) -> dict[str, projections.AttentionLine]:
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
    streams = whole_streams(missing)
    for session_id in missing.keys() - streams.keys():
        streams[session_id] = store.read_view_events(session_id, vocabulary.MAX_BLOCKERS_SHOWN)[0]
    found = {i: projections.attention_line(i, events) for i, events in streams.items()}
    for session_id, line in found.items():
        LINES.put(keys[session_id], line)
    return {**lines, **found}


def listing(
    query: store.SessionQuery,
    now: datetime | None = None,
    limits: projections.Thresholds | None = None,
) -> list[str]:
    """Session ids, newest activity first, narrowed as `query` asks: `store.listing` at
    `now` (default: the clock; as of `at`, `at`) with `limits` (default: the settings').
    `attention` True lists those that need a person, longest overdue first; False, every
    other (`needing_attention` decides both, so the two lists split every list)."""
    at = query.at
    now = at if at is not None else timezone.now() if now is None else now
    limits = thresholds() if limits is None else limits
    if query.attention is None:
        return store.listing(query, now, limits)
    needing = _needing_attention(query, now, limits)
    if query.attention:
        offset, limit = query.offset, query.limit
        return needing[offset:] if limit is None else needing[offset : offset + limit]
    return store.listing(query, now, limits, excluded=needing)


def _needing_attention(
    query: store.SessionQuery, now: datetime, limits: projections.Thresholds
) -> list[str]:
    """The sessions needing attention at `now` (as of `at`, if given), longest overdue
    first: only open sessions can, and the open-sessions model names them, so the answer
    costs the open sessions, never the closed history (on PostgreSQL the walk over every
    stream's tail cost seconds at a few hundred thousand events)."""
    rows = board_rows(query.owner, query.text, closed_since=now, at=query.at)
    if query.status is not None:
        rows = [row for row in rows if row.status == query.status]
    if query.stale is not None:
        quiet_before = now - limits.stale
        rows = [
            row
            for row in rows
            if (row.status == vocabulary.ACTIVE and row.last_at < quiet_before) == query.stale
        ]
    return [session_id for session_id, _ in needing_attention(rows, now, limits, query.at)]
