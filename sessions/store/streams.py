"""Reading streams: whole, by the few events a view depends on, their time spans,
lengths and blocked runs; and by id, range or moment for pages, exports and as-of views."""

import functools
from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

from django.db import connection

from sessions.domain import vocabulary
from sessions.domain.projections import ViewEvents, view_events
from sessions.domain.records import EventRecord
from sessions.models import PROGRESS_NOTES_INDEX, TOUCHED_INDEX, Event
from sessions.store.database import (
    RECORD_COLUMNS,
    SEQ_INDEX,
    SQLITE_RECORD_VALUES,
    TABLE,
    by_index,
    current_database,
    ids_param,
    iter_records,
    microseconds_of,
    moment_param,
    moment_read,
    one_of,
    per_stream,
    reading_cursor,
    records,
    records_from_rows,
    run_for_stream,
    run_prepared,
)
from sessions.store.writing import STREAM_SQL

# The few events a session's view depends on, however long its stream, each one index
# probe: the first and last events, the last transition (the status), the latest
# note-bearing event (a block always bears its reason), the latest unblock and block,
# the latest open blocks (after that unblock), the latest progress and the latest with
# a note, and the latest messages after that progress (pending). `projections.
# session_view` over these gives what it gives over the whole stream (tests/
# test_view_events.py states the rule in Python and checks both). Each branch is its
# own `ORDER BY … LIMIT` subquery, so that both planners walk an index backwards and
# stop, and PostgreSQL plans it in a fraction of a millisecond; the partial indexes
# skip heartbeats and messages, however many there are (named where SQLite would
# not take them: `by_index`).
_LATEST = "SELECT * FROM (SELECT {columns} FROM " + TABLE + "{index}"
_LATEST += " WHERE session = %s{where} ORDER BY seq DESC LIMIT {limit}) AS {name}"


def _last_seq_of(event_type: str) -> str:
    return (
        f"COALESCE((SELECT seq FROM {TABLE} WHERE session = %s AND type = '{event_type}'"
        " ORDER BY seq DESC LIMIT 1), 0)"
    )


_LAST_UNBLOCK = _last_seq_of(vocabulary.UNBLOCK)
_LAST_PROGRESS = _last_seq_of(vocabulary.PROGRESS)


def types_in(types: Sequence[str]) -> str:
    """SQL for "the type is one of `types`", as the partial indexes' conditions say it."""
    return "type IN (" + ", ".join(f"'{t}'" for t in types) + ")"


TRANSITION = types_in(vocabulary.TRANSITIONS)
# The transitions whose note, when set, is the next action (a block's is its reason).
NOTED_TRANSITIONS = [t for t in vocabulary.NOTE_BEARING if t != vocabulary.BLOCK]
_NOTED = types_in(NOTED_TRANSITIONS)


@functools.cache
def _view_events_sql(vendor: str, shown: int) -> str:
    """SQLite's branches pick seqs only, from the indexes alone, and each row picked is
    then read once: one event is often several branches' (the last event, transition and
    block), and reading a 35-column row per branch was a third of an append's read
    (bench/RESULTS.md §24). PostgreSQL's branches read their rows whole: its planner,
    with no statistics yet, read rows picked by seq (`IN`, `= ANY`, a lateral join) by
    walking the whole stream."""
    # The limit is written in, not bound: SQLite from 3.4x plans a statement again at
    # every new binding of its LIMIT (5x this statement's cost).
    columns = "seq" if vendor == "sqlite" else RECORD_COLUMNS
    _latest = functools.partial(_LATEST.format, columns=columns, index="")

    def latest_progress_with(column: str, index: str, name: str) -> str:
        where = f" AND type = '{vocabulary.PROGRESS}' AND {column} IS NOT NULL"
        return _latest(index=by_index(index, vendor), where=where, limit="1", name=name)

    branches = [
        f"SELECT {columns} FROM {TABLE} WHERE session = %s AND seq = 1",
        _latest(where="", limit="1", name="last_event"),
        _latest(where=f" AND {TRANSITION}", limit="1", name="last_transition"),
        _latest(where=f" AND note IS NOT NULL AND {_NOTED}", limit="1", name="noted"),
        _latest(where=f" AND type = '{vocabulary.BLOCK}'", limit="1", name="last_block"),
        _latest(where=f" AND type = '{vocabulary.UNBLOCK}'", limit="1", name="last_unblock"),
        _latest(
            where=f" AND type = '{vocabulary.BLOCK}' AND seq > {_LAST_UNBLOCK}",
            limit=int(shown),
            name="open_blocks",
        ),
        # The first open block: where the blocked run began (attention's `since`).
        f"SELECT * FROM (SELECT {columns} FROM {TABLE} WHERE session = %s"
        f" AND type = '{vocabulary.BLOCK}' AND seq > {_LAST_UNBLOCK}"
        " ORDER BY seq LIMIT 1) AS first_open_block",
        _latest(where=f" AND type = '{vocabulary.PROGRESS}'", limit="1", name="last_progress"),
        latest_progress_with("note", PROGRESS_NOTES_INDEX, "progress_note"),
        _latest(
            where=f" AND type = '{vocabulary.MESSAGE}' AND seq > {_LAST_PROGRESS}",
            limit=int(shown),
            name="pending",
        ),
        _latest(where=f" AND type = '{vocabulary.WORK}'", limit="1", name="last_work"),
        _latest(where=f" AND type = '{vocabulary.USAGE}'", limit="1", name="last_usage"),
        latest_progress_with("paths", TOUCHED_INDEX, "last_touched"),
    ]
    if vendor != "sqlite":
        return " UNION ALL ".join(branches)
    # UNION ALL: `IN` takes each seq once however often it comes, where UNION would
    # also build a temporary b-tree for each branch to drop the repeats.
    return (
        f"SELECT {SQLITE_RECORD_VALUES} FROM {TABLE} WHERE session = %s"
        f" AND seq IN ({' UNION ALL '.join(branches)}) ORDER BY seq"
    )


_OPEN_BLOCKS_SQL = (
    f"SELECT COUNT(*) FROM {TABLE} WHERE session = %s AND type = '{vocabulary.BLOCK}'"
    f" AND seq > {_LAST_UNBLOCK}"
)
_PENDING_SQL = (
    f"SELECT COUNT(*) FROM {TABLE} WHERE session = %s AND type = '{vocabulary.MESSAGE}'"
    f" AND seq > {_LAST_PROGRESS}"
)


_PENDING_OF_SQL = (
    f"SELECT {RECORD_COLUMNS} FROM {TABLE} WHERE session = %s AND type = '{vocabulary.MESSAGE}'"
    f" AND seq > {_LAST_PROGRESS} ORDER BY seq DESC LIMIT {{shown}}"
)


def pending_messages_of(streams: Sequence[str], shown: int) -> dict[str, list[EventRecord]]:
    """Each stream's latest `shown` messages after its last progress (those its worker
    never acknowledged), oldest first: one bounded probe a stream."""
    sql = _PENDING_OF_SQL.format(shown=int(shown))
    return {stream: records_from_rows(run_for_stream(sql, stream))[::-1] for stream in streams}


def read_view_events(stream: str, shown: int) -> ViewEvents:
    """The events a session's view depends on, oldest first, with how many blocks are
    open and how many messages are pending (all empty for no such session): a view
    costs the same at any stream length. Each count is asked of SQL only when there may
    be more than were read."""
    sql = _view_events_sql(current_database().vendor, shown)
    rows = run_for_stream(sql, stream)
    records = {record.seq: record for record in records_from_rows(rows)}
    chosen = view_events([records[seq] for seq in sorted(records)], shown)
    open_blocks, pending = chosen.open_blocks, chosen.pending_messages
    if open_blocks >= shown:
        [(open_blocks,)] = run_for_stream(_OPEN_BLOCKS_SQL, stream)
    if pending >= shown:
        [(pending,)] = run_for_stream(_PENDING_SQL, stream)
    return ViewEvents(chosen.events, open_blocks, pending)


# Each transition's span to the next, in microseconds, summed by the event's type: what
# `projections.time_in_state_from` needs besides the last transition (progress and
# messages leave the status as it was). One pass over the stream's transitions in SQL
# (a window function); exact, as both sides count whole microseconds.
_SPANS = (
    "SELECT type, SUM(next_at - at), MAX(next_seq) FROM (SELECT type, {at} AS at,"
    " LEAD({at}) OVER (ORDER BY seq) AS next_at, LEAD(seq) OVER (ORDER BY seq) AS next_seq"
    f" FROM {TABLE} WHERE session = %s AND {TRANSITION} AND seq >= %s AND seq <= %s) AS spans"
    " WHERE next_at IS NOT NULL GROUP BY type"
)


def stream_spans(
    stream: str, from_seq: int = 1, to_seq: int = vocabulary.MAX_STREAM_EVENTS
) -> tuple[dict[str, int], int]:
    """Microseconds from each transition from the one at `from_seq` on to the next (up
    to `to_seq`), summed by event type, and the seq of the last transition reached
    (`from_seq` when none follows it): ask again from there to add what came since."""
    rows = run_prepared(_SPANS.format(at=microseconds_of()), [stream, from_seq, to_seq])
    reached = max((next_seq for _, _, next_seq in rows), default=from_seq)
    return {kind: int(total) for kind, total, _ in rows}, reached


_FROM_SQL = f"SELECT {RECORD_COLUMNS} FROM {TABLE} WHERE session = %s AND seq >= %s ORDER BY seq"


def read_stream_from(stream: str, seq: int) -> tuple[tuple | None, list[EventRecord]]:
    """(the stream's row at `seq` as stored, unparsed, or None; the events after it): what
    a fold kept up to that row needs to catch up, and to check the row is still the one
    it folded."""
    rows = run_prepared(_FROM_SQL, [stream, seq])
    if not rows or rows[0][SEQ_INDEX] != seq:
        return None, []
    return rows[0], records_from_rows(rows[1:])


def read_stream(stream: str, alias: str = "default") -> list[EventRecord]:
    """One stream's events in stream order (fixed SQL: it runs on every page and append)."""
    with reading_cursor(alias) as cursor:
        cursor.execute(STREAM_SQL, [stream])
        return records_from_rows(cursor.fetchall())


# Each stream's last seq, one index probe per stream.
_LENGTHS = f"SELECT s.value, (SELECT MAX(seq) FROM {TABLE} WHERE session = s.value) FROM {{each}}"

# Each stream's first block after its last unblock, by a moment: two index probes per
# stream, however many blocks it holds (seq order is time order within a stream).
_RUN_STARTS = (
    f"SELECT s.value, (SELECT b.timestamp FROM {TABLE} b WHERE b.session = s.value"
    f" AND b.type = '{vocabulary.BLOCK}' AND b.seq > COALESCE((SELECT MAX(u.seq)"
    f" FROM {TABLE} u WHERE u.session = s.value AND u.type = '{vocabulary.UNBLOCK}'"
    " AND u.timestamp <= %s), 0) AND b.timestamp <= %s ORDER BY b.seq LIMIT 1) FROM {each}"
)
# The blocks and unblocks above a position, in the order they were appended.
_RUN_CHANGES = (
    f"SELECT session, type, timestamp FROM {TABLE} WHERE id > %s"
    f" AND type IN ('{vocabulary.BLOCK}', '{vocabulary.UNBLOCK}') ORDER BY id"
)

_END_OF_TIME = datetime.max.replace(tzinfo=UTC)


def blocked_run_starts(streams: Sequence[str], at: datetime = _END_OF_TIME) -> dict[str, datetime]:
    """For each of `streams`, its first block after its last unblock (where its current
    blocked run began), if any; as of `at`, if given."""
    moment = moment_param(at)
    return {
        stream: moment_read(start)
        for stream, start in per_stream(_RUN_STARTS, streams, [moment, moment])
        if start is not None
    }


def blocked_run_changes_after(position: int) -> list[tuple[str, str, datetime]]:
    """(stream, block or unblock, time) of the blocks and unblocks above `position`, in
    the order they were appended."""
    with connection.cursor() as cursor:
        cursor.execute(_RUN_CHANGES, [position])
        return [(stream, kind, moment_read(moment)) for stream, kind, moment in cursor]


def stream_lengths(streams: Sequence[str]) -> dict[str, int]:
    """How many events each of `streams` holds (those that exist)."""
    return {stream: length for stream, length in per_stream(_LENGTHS, streams) if length}


def read_streams(streams: Sequence[str]) -> dict[str, list[EventRecord]]:
    """Whole streams, each in stream order, keyed by id (those that exist)."""
    found: dict[str, list[EventRecord]] = {}
    with reading_cursor() as cursor:
        cursor.execute(
            f"SELECT {RECORD_COLUMNS} FROM {TABLE} WHERE {one_of('session')} ORDER BY session, seq",
            [ids_param(streams)],
        )
        for record in records_from_rows(cursor.fetchall()):
            found.setdefault(record.session, []).append(record)
    return found


# Reads by id, range and moment, built by the ORM -----------------------------------


def session_exists(session_id: str) -> bool:
    """Whether there is a session with this id (not a plan)."""
    return Event.objects.filter(session=session_id, seq=1, type=vocabulary.START).exists()


def event_position(stream: str, seq: int) -> int:
    """The global position (feed order) of a stream's event at `seq`."""
    return Event.objects.filter(session=stream, seq=seq).values_list("id", flat=True).get()


def events_page(session_id: str, after: int, limit: int) -> list[EventRecord]:
    """Up to `limit` of a session's events with a seq above `after`, oldest first (seqs
    have no gaps, so this is a range of them)."""
    return records(Event.objects.filter(session=session_id, seq__gt=after, seq__lte=after + limit))


def streams_as_of(streams: Sequence[str], at: datetime) -> dict[str, list[EventRecord]]:
    """The given streams' events up to `at`, each in stream order (those that had any)."""
    found: dict[str, list[EventRecord]] = defaultdict(list)
    for record in records(Event.objects.filter(session__in=list(streams), timestamp__lte=at)):
        found[record.session].append(record)
    return dict(found)


def every_stream(ids: Sequence[str] = ()) -> Iterator[EventRecord]:
    """Every event of the given streams (default: all), stream after stream, each in
    stream order, read in chunks (an export)."""
    rows = Event.objects.all()
    if ids:
        rows = rows.filter(session__in=list(ids))
    return iter_records(rows)


def has_acted(username: str) -> bool:
    """Whether any event names `username` as its actor."""
    return Event.objects.filter(actor=username).exists()
