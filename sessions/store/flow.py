"""The flow metrics' folds over the sessions alive in a window, in one statement."""

import functools
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from django.db import connection

from sessions.domain import vocabulary
from sessions.domain.metrics import ClosedInWindow
from sessions.store.database import (
    MICROSECONDS_SQL,
    NOT_BY_INDEX,
    TABLE,
    likely,
    microseconds_of,
    moment_param,
    moment_read,
    run_prepared,
)
from sessions.store.streams import TRANSITION

# Metrics ------------------------------------------------------------------------------

# The sessions open at some moment of a window or closed in it (params: until, since),
# found by their start rows (the time bounds hold for nearly all of them; SQLite would
# otherwise walk every event by time to find the starts).
_ALIVE = (
    f"SELECT s.session FROM {TABLE} s WHERE s.type = '{vocabulary.START}'"
    " AND {started_by} AND NOT EXISTS (SELECT 1 FROM"
    f" {TABLE} c WHERE c.session = s.session AND c.type = '{vocabulary.CLOSE}'"
    " AND {closed_by})"
)
_CLOSED_BEFORE = (
    f"SELECT COUNT(*) FROM {TABLE} WHERE type = '{vocabulary.CLOSE}' AND timestamp < %s"
)
# The flow metrics' folds, in one statement over the transitions of the sessions alive in
# a window (progress and messages leave the status as it was): each transition paired
# with the next of its stream (how long its status lasted),
# then one grouping by session gives its last event, its start, its time blocked and in
# review, and, for the cumulative flow, the few events whose status outlasted a midnight
# (the others add and remove themselves on the same day). The databases pair events in
# different ways, and differ in moments:
# - SQLite pairs by a window function too. (It used to join each event to the next by
#   its seq, which was faster — at 490,000 events 1.15 s against 1.7 on SQLite 3.40, 0.84
#   against 1.1 on 3.51 — but a transition's next transition is not at seq + 1 once
#   heartbeats and messages sit between them.) Its moments are text, parsed only where
#   an aggregate needs them; a text comparison of dates rules most events out of the
#   midnight test before any parsing.
# - PostgreSQL pairs by a window function over its rows. Its moments are timestamps,
#   whose differences it sums as intervals, turned into numbers once per session
#   (exactly, and 110 ms sooner at 490,000 events than per event).
DAY_MICROSECONDS = 86_400_000_000
# Moments before 1970 are negative, and integer division truncates towards zero on both
# databases: shifting every moment past the year 2 to positive makes it a floor.
_SHIFT_DAYS = 720_000


def _day_number(moment: str, ceiling: bool = False) -> str:
    """SQL for the day number (since 1970-01-01) of a moment given in microseconds since
    the epoch: of the midnight at or before it, or with `ceiling` of the first at or
    after it."""
    shift = _SHIFT_DAYS * DAY_MICROSECONDS + (DAY_MICROSECONDS - 1 if ceiling else 0)
    return f"(({moment} + {shift}) / {DAY_MICROSECONDS} - {_SHIFT_DAYS})"


class _Pairs(NamedTuple):
    """How one database pairs each event of the alive sessions with the next of its
    stream, and handles their moments (templates for `.format`)."""

    source: str  # FROM and WHERE, given `alive`, grouped by session
    type: str
    outcome: str
    at: str  # the event's moment, given `microseconds` (SQLite's parsing)
    next_at: str  # the next event's moment, NULL after the last
    last: str  # true on a stream's last event
    maybe_crossing: str  # true at least where the two moments' first midnights differ
    microseconds: str  # a moment as microseconds since the epoch
    whole_seconds: str  # a sum of differences of moments as whole seconds
    no_time: str
    first_midnight: str  # the day number of the first UTC midnight at or after a moment
    joined: str  # the text aggregate, joining with commas


_PAIRS = {
    "sqlite": _Pairs(
        source="(SELECT session, type, outcome, timestamp, LEAD(timestamp) OVER"
        f" (PARTITION BY session ORDER BY seq) AS next_timestamp FROM {TABLE}"
        f" WHERE session IN ({{alive}}) AND {TRANSITION}) AS e GROUP BY e.session",
        type="e.type",
        outcome="e.outcome",
        at="{microseconds[e]}",
        next_at="{microseconds[n]}",
        last="e.next_timestamp IS NULL",
        # Moments of one date, neither at midnight to the second, share their first
        # midnight (the next day's): no parsing needed to rule them out.
        maybe_crossing="(substr(e.timestamp, 1, 10) <> substr(e.next_timestamp, 1, 10)"
        " OR substr(e.timestamp, 12, 8) = '00:00:00'"
        " OR substr(e.next_timestamp, 12, 8) = '00:00:00')",
        microseconds="{}",
        whole_seconds="CAST({} AS BIGINT) / 1000000",
        no_time="0",
        first_midnight=_day_number("{}", ceiling=True),
        joined="group_concat({}, ',')",
    ),
    "postgresql": _Pairs(
        source="(SELECT session, type, outcome, timestamp AS at, LEAD(timestamp) OVER"
        f" (PARTITION BY session ORDER BY seq) AS next_at FROM {TABLE}"
        f" WHERE session IN ({{alive}}) AND {TRANSITION}) AS pairs GROUP BY session",
        type="type",
        outcome="outcome",
        at="at",
        next_at="next_at",
        last="next_at IS NULL",
        maybe_crossing="TRUE",
        microseconds=MICROSECONDS_SQL["postgresql"],
        whole_seconds="FLOOR(EXTRACT(EPOCH FROM {}))::bigint",
        no_time="interval '0'",
        first_midnight="((({} - interval '1 microsecond') AT TIME ZONE 'UTC')::date + 1"
        " - DATE '1970-01-01')",
        joined="string_agg({}, ',')",
    ),
}

# Per session: its last event's moment (microseconds since the epoch), type and outcome
# (a close is a stream's last event: nothing may follow it), its start's moment, whole
# seconds blocked and in review, and its other events whose status outlasted a
# midnight, as "type day next-day" (it counted from one day to the other), if any.
_FLOW_FOLDS = (
    "SELECT {last_at} AS last_at, MAX({type}) FILTER (WHERE {last}) AS last,"
    " MAX({outcome}) FILTER (WHERE {last}) AS outcome, {started_at} AS started_at,"
    " {blocked} AS blocked, {review} AS review, {crossings} AS crossings FROM {source}"
)
# The folds packed into one row of comma-separated lists: the closed sessions' whole
# seconds from start to close (as `metrics.metrics` counts a cycle: truncated), blocked
# and in review, and "day outcome" of each close; every session's "type day" of its last
# event's first midnight; the midnight crossings. Handing Python 100,000 rows cost more
# than all the packing.
_FLOW_PACKED = (
    "SELECT {cycles} FILTER (WHERE {closed}), {blocked} FILTER (WHERE {closed}),"
    " {review} FILTER (WHERE {closed}), {closes} FILTER (WHERE {closed}), {lasts},"
    " {crossings} FROM ({folds}) AS folds"
)


@functools.cache
def _flow_folds_sql(vendor: str, microseconds: tuple[str, str]) -> str:
    pairs = _PAIRS[vendor]
    moment_of = {"e": microseconds[0], "n": microseconds[1]}
    at, next_at = (m.format(microseconds=moment_of) for m in (pairs.at, pairs.next_at))

    def spent_in(status: str) -> str:
        kinds = ", ".join(f"'{t}'" for t, then in vocabulary.STATUS_AFTER.items() if then == status)
        spans = f"SUM({next_at} - {at}) FILTER (WHERE {pairs.type} IN ({kinds}))"
        return pairs.whole_seconds.format(f"COALESCE({spans}, {pairs.no_time})")

    day, next_day = pairs.first_midnight.format(at), pairs.first_midnight.format(next_at)
    crossing = f"{pairs.type} || ' ' || {day} || ' ' || {next_day}"
    alive = _ALIVE.format(
        # SQLite 3.40 would otherwise walk every event by time to find the starts.
        started_by=likely(NOT_BY_INDEX[vendor].format("s.timestamp") + " < %(until)s"),
        closed_by=likely("c.timestamp < %(since)s"),
    )
    folds = _FLOW_FOLDS.format(
        last_at=pairs.microseconds.format(f"MAX({at}) FILTER (WHERE {pairs.last})"),
        type=pairs.type,
        outcome=pairs.outcome,
        last=pairs.last,
        started_at=pairs.microseconds.format(
            f"MIN({at}) FILTER (WHERE {pairs.type} = '{vocabulary.START}')"
        ),
        blocked=spent_in(vocabulary.BLOCKED),
        review=spent_in(vocabulary.IN_REVIEW),
        crossings=pairs.joined.format(crossing)
        + f" FILTER (WHERE {pairs.maybe_crossing} AND {next_day} <> {day})",
        source=pairs.source.format(alive=alive),
    )

    def listed(value: str) -> str:
        return pairs.joined.format(f"CAST({value} AS TEXT)")

    return _FLOW_PACKED.format(
        cycles=listed("(last_at - started_at) / 1000000"),
        blocked=listed("blocked"),
        review=listed("review"),
        closes=listed(f"{_day_number('last_at')} || ' ' || COALESCE(outcome, '{vocabulary.DONE}')"),
        closed=f"last = '{vocabulary.CLOSE}' AND last_at >= %(first)s AND last_at < %(end)s",
        lasts=listed(f"last || ' ' || {_day_number('last_at', ceiling=True)}"),
        crossings=pairs.joined.format("crossings"),
        folds=folds,
    )


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _epoch_microseconds(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(microseconds=1)


def flow_folds(since: datetime, until: datetime) -> tuple[ClosedInWindow, list[tuple]]:
    """The folds `metrics.metrics_from_folds` takes, for the window `[since, until)`: the
    sessions closed in it, and the changes to how many sessions are in each status at
    midnights, as (event type, day number since 1970-01-01, change)."""
    microseconds = (microseconds_of("e.timestamp"), microseconds_of("e.next_timestamp"))
    sql = _flow_folds_sql(connection.vendor, microseconds)
    params = {
        "first": _epoch_microseconds(since),
        "end": _epoch_microseconds(until),
        "since": moment_param(since),
        "until": moment_param(until),
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        cycles, blocked, review, closes, lasts, crossings = cursor.fetchone()
    per_day: Counter[tuple[int, str]] = Counter()
    for close, count in Counter(_listed(closes)).items():
        day, outcome = close.split(" ")
        per_day[int(day), outcome] = count
    changes: Counter[tuple[str, int]] = Counter()
    for last, count in Counter(_listed(lasts)).items():
        kind, day = last.split(" ")
        changes[kind, int(day)] += count
    for crossing in _listed(crossings):
        kind, first, then = crossing.split(" ")
        changes[kind, int(first)] += 1
        changes[kind, int(then)] -= 1
    closed = ClosedInWindow(
        per_day, *(list(map(int, _listed(values))) for values in (cycles, blocked, review))
    )
    return closed, [(kind, day, change) for (kind, day), change in changes.items() if change]


def _listed(text: str | None) -> list[str]:
    return text.split(",") if text else []


# The sessions closed in a window, by the agent their start names and the close's outcome
# (params: since, until), by the time index.
_CLOSES_BY_AGENT = (
    f"SELECT s.agent, c.outcome, COUNT(*) FROM {TABLE} c JOIN {TABLE} s"
    f" ON s.session = c.session AND s.seq = 1 WHERE c.type = '{vocabulary.CLOSE}'"
    " AND c.timestamp >= %s AND c.timestamp < %s GROUP BY s.agent, c.outcome"
)


def closes_by_agent(since: datetime, until: datetime) -> dict[tuple[str | None, str], int]:
    """How many sessions closed in `[since, until)`, per (the agent their start names, or
    None; the outcome, `done` when the close names none)."""
    found: Counter = Counter()
    with connection.cursor() as cursor:
        cursor.execute(_CLOSES_BY_AGENT, [moment_param(since), moment_param(until)])
        for agent, outcome, count in cursor.fetchall():
            found[agent, outcome or vocabulary.DONE] += count
    return dict(found)


def closed_before(moment: datetime) -> int:
    """How many sessions were closed before `moment`."""
    with connection.cursor() as cursor:
        cursor.execute(_CLOSED_BEFORE, [moment_param(moment)])
        return cursor.fetchone()[0]


# The first event's time, off the timestamp index (one probe).
_FIRST_MOMENT = f"SELECT timestamp FROM {TABLE} ORDER BY timestamp, id LIMIT 1"


def first_moment() -> datetime | None:
    """When the first event happened, or None for an empty tower."""
    rows = run_prepared(_FIRST_MOMENT, [])
    return moment_read(rows[0][0]) if rows else None
