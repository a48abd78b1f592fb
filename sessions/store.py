"""The event store: the only SQL, locks and per-database differences in Control Tower.

Above it the rules (`append`) decide what may be written and the read side (`reading`,
`open_sessions`) decides what to show; below it is the `tower_event` table. It offers:

- `holding(stream)`: a transaction that holds one stream against every other writer;
- `appending(stream)`: where an append runs, `holding` the stream or, on PostgreSQL,
  letting the insert's own transaction and the unique (session, seq) decide a race;
- `read_view_events` (the few events a view depends on, the stream's ends among them),
  `insert` and `key_event`: the append, its expected position checked by the caller
  inside `appending`, its idempotency key by the insert;
- `read_stream`: one stream, oldest first; `stream_ends`: its first and last events;
- `SafePosition` and `read_feed`: how far the table can be read in position (id) order
  with no lower position still to appear, and the events up to there, for folds and
  feeds that catch up by position.

Rows come out as `EventRecord`s (`projections`), never as model instances, so nothing
here imports the models and the read side stays free of the ORM's per-value costs.
"""

import fcntl
import functools
import json
import os
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper

from . import vocabulary
from .metrics import ClosedInWindow
from .plans import NodeSession
from .projections import EventRecord

TABLE = "tower_event"
# An event's stored columns after its id, in `EventRecord` order: the one field list that
# every statement below is built from.
COLUMNS = (*EventRecord._fields, "idempotency_key")
_RECORD_COLUMNS = ", ".join(EventRecord._fields)


def _db() -> BaseDatabaseWrapper:
    """The default database's wrapper for this thread, looked up once by a hot function:
    each `connection.<attribute>` looks it up again (a sixth of an append's own time)."""
    return connections[DEFAULT_DB_ALIAS]


def moment_param(moment: datetime) -> object:
    """A moment as a parameter of hand-written SQL, in the form the table stores: the
    SQLite driver would send an aware datetime with its offset ("+00:00"), which as text
    sorts after the same moment stored without one."""
    return _db().ops.adapt_datetimefield_value(moment)


def aware_utc(timestamp: datetime) -> datetime:
    """A timestamp read on a plain cursor: SQLite gives naive UTC, PostgreSQL aware."""
    return timestamp if timestamp.tzinfo else timestamp.replace(tzinfo=UTC)


# The graph fields are JSON text in their columns, the last of an `EventRecord`'s.
_GRAPH_START = len(EventRecord._fields) - len(vocabulary.GRAPH_FIELDS)
assert EventRecord._fields[_GRAPH_START:] == vocabulary.GRAPH_FIELDS


def _graph_value(text: str | None) -> list | None:
    return None if text is None else json.loads(text)


def records_from_rows(rows: Sequence[Sequence]) -> list[EventRecord]:
    records = []
    for stream, seq, kind, timestamp, *rest in rows:
        if kind in vocabulary.PLAN_EVENT_TYPES:
            rest[_GRAPH_START - 4 :] = map(_graph_value, rest[_GRAPH_START - 4 :])
        records.append(EventRecord(stream, seq, kind, aware_utc(timestamp), *rest))
    return records


def _row_params(record: EventRecord, idempotency_key: str | None) -> list:
    """An event's column values for an insert, in `COLUMNS` order."""
    graph = [
        None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        for value in record[_GRAPH_START:]
    ]
    return [
        *record[:3],
        moment_param(record.timestamp),
        *record[4:_GRAPH_START],
        *graph,
        idempotency_key,
    ]


@contextmanager
def reading_cursor(alias: str = "default") -> Iterator[CursorWrapper]:
    """A plain cursor for reading events in bulk.

    On PostgreSQL it parses timestamps with psycopg's own loader (in C): Django's, which
    re-attaches the time zone in Python, took two thirds of the time to load 5,000
    sessions' streams (bench/RESULTS.md, §5). Django sets the connection's time zone to
    UTC, so both give the same values.
    """
    with connections[alias].cursor() as cursor:
        if connections[alias].vendor == "postgresql":
            from psycopg.types.datetime import TimestamptzLoader

            cursor.cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
        yield cursor


def run_prepared(sql: str, params: Sequence) -> list[tuple]:
    """Run a hot statement that returns rows (a SELECT, or an INSERT … RETURNING) and
    return them, past Django's cursor wrapper (which rewrote the placeholders of every
    SQLite statement on every run).

    PostgreSQL plans it once per connection, not on every run (the view's events took
    1.3 ms to plan and 0.3 ms to run): a server-bound psycopg cursor executes it as a
    prepared statement (the settings let the connection keep them). SQLite plans in
    microseconds, and the sqlite3 module keeps the compiled statement per connection.
    """
    db = _db()
    db.ensure_connection()
    with db.wrap_database_errors:
        if db.vendor == "postgresql":
            rows = _run_prepared_postgresql(db, sql, params)
        else:
            rows = db.connection.execute(_qmark(sql), params).fetchall()
    if db.queries_logged:  # seen by debug tools and query-count tests too
        db.queries_log.append({"sql": sql, "time": "0.000"})
    return rows


def _run_prepared_postgresql(db, sql: str, params: Sequence) -> list[tuple]:
    # One server-bound cursor per connection, made once: making one (and its loaders)
    # for every statement cost as much as sending it.
    kept = getattr(db, "_tower_prepared", None)
    if kept is None or kept[0] is not db.connection:
        import psycopg
        from psycopg.types.datetime import TimestamptzLoader

        cursor = psycopg.Cursor(db.connection)
        cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
        kept = db._tower_prepared = (db.connection, cursor)
    kept[1].execute(sql, params, prepare=True)
    return kept[1].fetchall()


@functools.cache
def _qmark(sql: str) -> str:
    """A statement written with Django's placeholders (%s) in SQLite's (?)."""
    return re.sub(r"(?<!%)%s", "?", sql).replace("%%", "%")


# Writers ------------------------------------------------------------------------------

# SQLite has one writer at a time. Writers queue for it here rather than in SQLite's busy
# handler, which polls in growing sleeps (1, 2, 5, 10 ms…): threads of one process on a
# lock, processes (gunicorn workers) on an exclusive lock of a file beside the database,
# which the kernel hands to the next waiter as soon as it is released.
_SQLITE_THREADS = threading.Lock()
_sqlite_lock_files: dict = {}


def _sqlite_lock_file():
    """This process's open lock file for the database (opened anew after a fork)."""
    path = f"{connection.settings_dict['NAME']}.writers"
    key = (os.getpid(), path)
    if key not in _sqlite_lock_files:
        _sqlite_lock_files[key] = open(path, "a")  # noqa: SIM115 (kept open: it holds the lock)
    return _sqlite_lock_files[key]


@contextmanager
def _sqlite_writer_turn() -> Iterator[None]:
    with _SQLITE_THREADS:
        lock_file = _sqlite_lock_file()
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)


_LOCK = "pg_advisory_xact_lock(hashtextextended(%s, 0))"  # a stream's, on PostgreSQL


@contextmanager
def holding(*streams: str) -> Iterator[None]:
    """A transaction that holds `streams` against every other writer, taken in the
    order given (a plan before a session on its node, always).

    SQLite: the writers' queue, then `BEGIN IMMEDIATE` (the settings' transaction mode).
    PostgreSQL: a transaction-scoped advisory lock on each stream's id.
    """
    vendor = _db().vendor
    queue = _sqlite_writer_turn() if vendor == "sqlite" else nullcontext()
    with queue, transaction.atomic():
        if vendor == "postgresql":
            # One round trip: the locks, in the order given, then the transaction id,
            # taken before any event id, which is what lets readers tell when no lower
            # event id can still commit (`SafePosition`).
            locks = ", ".join([_LOCK] * len(streams))
            run_prepared(f"SELECT {locks}, pg_current_xact_id()", list(streams))
        yield


@contextmanager
def appending(*streams: str, locked: bool = False) -> Iterator[None]:
    """Where one append runs (its reads, its rules and its `insert`): `holding` its
    streams, except on PostgreSQL for an append to one stream, not `locked`, outside any
    transaction. That one holds nothing while it reads the stream in autocommit; its
    insert is a transaction of its own, sent in one round trip, that takes the stream's
    lock first (so it never slips between a holder's read and insert), and the unique
    (session, seq) decides a race: the loser's insert raises IntegrityError, and it
    tries again holding the stream, where it cannot lose. Five round trips (begin, lock,
    read, insert, commit) become two. An append that spans streams (a start on a plan's
    node holds the plan) always holds them, and so does SQLite, where writers take turns
    anyway and queue best on its file lock."""
    db = _db()
    if not locked and len(streams) == 1 and db.vendor == "postgresql" and not db.in_atomic_block:
        yield
        return
    with holding(*streams):
        yield


# The append's statements are plain SQL: building them through the ORM cost three
# quarters of an append's time (bench/append_inprocess.py, bench/RESULTS.md). Each probe
# has one index that serves it whatever the planner's statistics say: with none yet (a
# new table), PostgreSQL found a stream's ends by walking the whole stream, and an
# idempotency key by walking every event of its actor.
_ENDS_SQL = (
    f"SELECT {_RECORD_COLUMNS} FROM {TABLE} WHERE session = %s AND seq = 1 UNION ALL"
    f" SELECT * FROM (SELECT {_RECORD_COLUMNS} FROM {TABLE} WHERE session = %s"
    " ORDER BY seq DESC LIMIT 1) AS last_event"
)
_KEY_SQL = (
    f"SELECT {_RECORD_COLUMNS} FROM {TABLE}"
    " WHERE session = %s AND actor = %s AND idempotency_key = %s"
)
_INSERT_INTO = f"INSERT INTO {TABLE} ({', '.join(COLUMNS)})"
_VALUES = ", ".join(["%s"] * len(COLUMNS))
_INSERT_SQL = f"{_INSERT_INTO} VALUES ({_VALUES}) RETURNING id"
# An insert unless the actor's key is already on the stream, in the same statement.
# PostgreSQL checks the key in the unique index it arbitrates on; SQLite cannot (its
# trigger refusing replacement fires before any conflict clause), so it asks first.
_KEYED_INSERT_SQL = {
    "postgresql": _INSERT_SQL.replace(
        " RETURNING",
        " ON CONFLICT (session, actor, idempotency_key) WHERE idempotency_key IS NOT NULL"
        " DO NOTHING RETURNING",
    ),
    "sqlite": (
        f"{_INSERT_INTO} SELECT {_VALUES} WHERE NOT EXISTS (SELECT 1 FROM {TABLE}"
        " WHERE session = %s AND actor = %s AND idempotency_key = %s) RETURNING id"
    ),
}
_STREAM_SQL = f"SELECT {_RECORD_COLUMNS} FROM {TABLE} WHERE session = %s ORDER BY seq"


def stream_ends(stream: str) -> list[EventRecord]:
    """The stream's first and last events (one when they are the same; none if empty)."""
    with reading_cursor() as cursor:
        cursor.execute(_ENDS_SQL, [stream, stream])
        rows = records_from_rows(cursor.fetchall())
    return rows[:1] if len(rows) == 2 and rows[0].seq == rows[1].seq else rows


_TAIL_SQL = f"SELECT {_RECORD_COLUMNS} FROM {TABLE} WHERE session = %s ORDER BY seq DESC LIMIT 1"


def stream_tail(stream: str) -> tuple | None:
    """The stream's last row as stored, unparsed (None for no such stream): it tells
    whether the stream has grown since it was last read, in one index probe."""
    rows = run_prepared(_TAIL_SQL, [stream])
    return rows[0] if rows else None


def key_event(stream: str, actor: str, key: str) -> EventRecord | None:
    """The event `actor` appended to `stream` under idempotency `key`, if any."""
    with reading_cursor() as cursor:
        cursor.execute(_KEY_SQL, [stream, actor, key])
        rows = records_from_rows(cursor.fetchall())
    return rows[0] if rows else None


_CLAIM_KEY_SQL = (
    f"SELECT {_RECORD_COLUMNS} FROM {TABLE} WHERE plan = %s AND type = '{vocabulary.START}'"
    " AND actor = %s AND idempotency_key = %s"
)


def claim_event(plan: str, actor: str, key: str) -> EventRecord | None:
    """The start on a node of `plan` that `actor` made under idempotency `key`, if any."""
    rows = records_from_rows(run_prepared(_CLAIM_KEY_SQL, [plan, actor, key]))
    return rows[0] if rows else None


def insert(record: EventRecord, idempotency_key: str | None = None) -> int | None:
    """Insert one event (inside `appending`): its position, or None when the event's actor
    has already appended to its stream under `idempotency_key` (nothing is written)."""
    db = _db()
    params = _row_params(record, idempotency_key)
    sql = _INSERT_SQL
    if idempotency_key is not None:
        sql = _KEYED_INSERT_SQL[db.vendor]
        if db.vendor == "sqlite":
            params += [record.session, record.actor, idempotency_key]
    if db.vendor == "postgresql" and not db.in_atomic_block:
        return _insert_committed(record.session, sql, params)
    rows = run_prepared(sql, params)
    return rows[0][0] if rows else None


def _insert_committed(stream: str, sql: str, params: Sequence) -> int | None:
    """PostgreSQL: the insert as a transaction of its own in one round trip (statements
    sent together in autocommit run as one transaction). It first takes the stream's
    lock, so that it never slips between a holder's read and insert (a holder never
    loses a race), and its transaction id, as every writer does before any event id
    (`SafePosition`)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {_LOCK}, pg_current_xact_id(); {sql}", [stream, *params])
        cursor.nextset()
        row = cursor.fetchone()
    return row[0] if row else None


def insert_many(records: Sequence[EventRecord]) -> None:
    """Insert a whole stream's events (inside `holding`), e.g. from an imported file."""
    with connection.cursor() as cursor:
        cursor.executemany(
            _INSERT_SQL.removesuffix(" RETURNING id"),
            [_row_params(record, None) for record in records],
        )


# The few events a session's view depends on, however long its stream, each one index
# probe: the first and last events, the latest note-bearing event (a block always bears
# its reason), the latest unblock and block, and the latest open blocks (after that
# unblock). `projections.session_view` over these gives what it gives over the whole
# stream (tests/test_view_events.py states the rule in Python and checks both). Each
# branch is its own `ORDER BY … LIMIT` subquery, so that both planners walk an index
# backwards and stop, and PostgreSQL plans it in a fraction of a millisecond.
_LATEST = f"SELECT * FROM (SELECT {_RECORD_COLUMNS} FROM {TABLE} WHERE session = %s{{where}}"
_LATEST += " ORDER BY seq DESC LIMIT {limit}) AS {name}"
_LAST_UNBLOCK = (
    f"COALESCE((SELECT seq FROM {TABLE} WHERE session = %s AND type = '{vocabulary.UNBLOCK}'"
    " ORDER BY seq DESC LIMIT 1), 0)"
)


@functools.cache
def _view_events_sql(shown_blocks: int) -> str:
    # The limit is written in, not bound: SQLite from 3.4x plans a statement again at
    # every new binding of its LIMIT (5x this statement's cost).
    return " UNION ALL ".join(
        [
            f"SELECT {_RECORD_COLUMNS} FROM {TABLE} WHERE session = %s AND seq = 1",
            _LATEST.format(where="", limit="1", name="last_event"),
            _LATEST.format(where=" AND note IS NOT NULL", limit="1", name="last_note"),
            _LATEST.format(where=f" AND type = '{vocabulary.BLOCK}'", limit="1", name="last_block"),
            _LATEST.format(
                where=f" AND type = '{vocabulary.UNBLOCK}'", limit="1", name="last_unblock"
            ),
            _LATEST.format(
                where=f" AND type = '{vocabulary.BLOCK}' AND seq > {_LAST_UNBLOCK}",
                limit=int(shown_blocks),
                name="open_blocks",
            ),
            # The first open block: where the blocked run began (attention's `since`).
            f"SELECT * FROM (SELECT {_RECORD_COLUMNS} FROM {TABLE} WHERE session = %s"
            f" AND type = '{vocabulary.BLOCK}' AND seq > {_LAST_UNBLOCK}"
            " ORDER BY seq LIMIT 1) AS first_open_block",
        ]
    )


_OPEN_BLOCKS_SQL = (
    f"SELECT COUNT(*) FROM {TABLE} WHERE session = %s AND type = '{vocabulary.BLOCK}'"
    f" AND seq > {_LAST_UNBLOCK}"
)


def read_view_events(stream: str, shown_blocks: int) -> tuple[list[EventRecord], int]:
    """The events a session's view depends on, oldest first, and how many blocks are
    open (both empty for no such session): a view costs the same at any stream length.
    The open blocks are counted in SQL only when there may be more than were read."""
    rows = run_prepared(_view_events_sql(shown_blocks), [stream] * 9)
    records = {record.seq: record for record in records_from_rows(rows)}
    events = [records[seq] for seq in sorted(records)]
    unblocked = max((e.seq for e in events if e.type == vocabulary.UNBLOCK), default=0)
    open_blocks = sum(1 for e in events if e.type == vocabulary.BLOCK and e.seq > unblocked)
    if open_blocks >= shown_blocks:
        [(open_blocks,)] = run_prepared(_OPEN_BLOCKS_SQL, [stream, stream])
    return events, open_blocks


# Each event's span to the next, in microseconds, summed by the event's type: what
# `projections.time_in_state_from` needs besides the last event. One pass over the
# stream in SQL (a window function); exact, as both sides count whole microseconds.
_MICROSECONDS = {
    # Whole seconds from the text without its fraction (a fraction would be rounded),
    # then the six digits of microseconds Django writes after them (none when zero).
    # unixepoch() (SQLite 3.38) parses in a third of strftime's time.
    "sqlite": "(unixepoch(substr({0}, 1, 19)) * 1000000 + CAST(substr({0}, 21, 6) AS INTEGER))",
    "sqlite<3.38": "(CAST(strftime('%%s', substr({0}, 1, 19)) AS INTEGER) * 1000000"
    " + CAST(substr({0}, 21, 6) AS INTEGER))",
    # Exact (numeric); date_part's float8 can miss by a microsecond after 2100.
    "postgresql": "(EXTRACT(EPOCH FROM {0}) * 1000000)::bigint",
}


def _microseconds(column: str = "timestamp") -> str:
    """SQL for a moment column in whole microseconds since the epoch, on this database."""
    if connection.vendor == "sqlite" and connection.Database.sqlite_version_info < (3, 38):
        return _MICROSECONDS["sqlite<3.38"].format(column)
    return _MICROSECONDS[connection.vendor].format(column)


_SPANS = (
    "SELECT type, SUM(next_at - at), MAX(seq) FROM (SELECT type, seq, {at} AS at,"
    " LEAD({at}) OVER (ORDER BY seq) AS next_at FROM tower_event"
    " WHERE session = %s AND seq >= %s AND seq <= %s) AS spans"
    " WHERE next_at IS NOT NULL GROUP BY type"
)


def stream_spans(
    stream: str, from_seq: int = 1, to_seq: int = vocabulary.MAX_STREAM_EVENTS
) -> tuple[dict[str, int], int]:
    """Microseconds from each event from `from_seq` on to the next (up to the event
    `to_seq`), summed by event type, and the seq of the last event reached (`from_seq`
    when none follows it): ask again from there to add what came since."""
    rows = run_prepared(_SPANS.format(at=_microseconds()), [stream, from_seq, to_seq])
    reached = max((last_seq + 1 for _, _, last_seq in rows), default=from_seq)
    return {kind: int(total) for kind, total, _ in rows}, reached


def read_stream(stream: str, alias: str = "default") -> list[EventRecord]:
    """One stream's events in stream order (fixed SQL: it runs on every page and append)."""
    with reading_cursor(alias) as cursor:
        cursor.execute(_STREAM_SQL, [stream])
        return records_from_rows(cursor.fetchall())


# Reading by position ------------------------------------------------------------------

_SEEN_POSTGRESQL = (
    f"SELECT MAX(id), pg_snapshot_xmin(pg_current_snapshot())::text::bigint,"
    f" pg_snapshot_xmax(pg_current_snapshot())::text::bigint FROM {TABLE}"
)


class SafePosition:
    """Tracks the safe position: one at or below which no event can still appear.

    - SQLite has one writer at a time (transactions begin IMMEDIATE), so rows become
      visible in id order: the newest id seen is safe.
    - PostgreSQL hands out ids as rows are inserted, and transactions commit in any
      order: a lower id can become visible after a higher one was seen. Every writer
      takes its transaction id before its event ids (`holding`), so once every
      transaction running when an id M was seen has ended (a later snapshot's xmin has
      reached that moment's xmax), no row with an id up to M can appear any more. A
      transaction left open anywhere on the server holds the safe position back.

    Call `advance` outside transactions only, where a reader sees committed rows only.
    """

    def __init__(self) -> None:
        self.position = 0
        # PostgreSQL: (newest id seen, the snapshot's xmax then), oldest first.
        self.sightings: list[tuple[int, int]] = []

    def advance(self, cursor: CursorWrapper) -> int:
        """The safe position now (never lower than before, unless rows were lost)."""
        if connection.vendor == "sqlite":
            cursor.execute(f"SELECT MAX(id) FROM {TABLE}")
            return cursor.fetchone()[0] or 0
        cursor.execute(_SEEN_POSTGRESQL)
        newest, xmin, xmax = cursor.fetchone()
        newest = newest or 0
        if not self.sightings or self.sightings[-1][0] != newest:
            self.sightings.append((newest, xmax))
            # While a long transaction holds xmin back, keep the latest sightings only:
            # any one of them is a valid safe position once settled.
            del self.sightings[:-100]
        # A sighting with no transaction running then (xmax = xmin) is settled at once:
        # any id drawn later is higher than every id seen.
        settled = [seen for seen, then in self.sightings if then <= xmin]
        self.sightings = [(seen, then) for seen, then in self.sightings if then > xmin]
        return max(settled, default=self.position)


# The feed's narrowing, each an optional clause on the rows read after a position.
_FEED_FILTERS = {
    "event_type": "type = %s",
    "stream": "session = %s",
    # A plan's own events, and those of every session started on one of its nodes.
    "plan": (
        f"(session = %s OR session IN (SELECT session FROM {TABLE}"
        f" WHERE type = '{vocabulary.START}' AND plan = %s))"
    ),
}


def read_feed(
    after: int, up_to: int, limit: int, **filters: str | None
) -> list[tuple[int, EventRecord]]:
    """Up to `limit` events with a position in (after, up_to], in position order, each
    with its position, narrowed by any of `_FEED_FILTERS` given (None: not narrowed).
    With `up_to` a `SafePosition`, a reader that keeps the last position it saw never
    misses an event nor sees one twice."""
    clauses, params = ["id > %s", "id <= %s"], [after, up_to]
    for name, value in filters.items():
        if value is not None:
            clauses.append(_FEED_FILTERS[name])
            params += [value] * _FEED_FILTERS[name].count("%s")
    sql = f"SELECT id, {_RECORD_COLUMNS} FROM {TABLE} WHERE {' AND '.join(clauses)}"
    with reading_cursor() as cursor:
        cursor.execute(f"{sql} ORDER BY id LIMIT %s", [*params, limit])
        rows = cursor.fetchall()
    records = records_from_rows([row[1:] for row in rows])
    return [(row[0], record) for row, record in zip(rows, records, strict=True)]


# The sessions of some types' rows in a position range. The first fold's unary plus
# keeps the planner off the primary key, so that it reads the type's partial index
# instead of the whole table (328 -> 158 ms in SQLite at 100,000 closed sessions,
# bench/RESULTS.md §3). Both databases read a one-type `IN` as an equality.
_STREAMS_OF_TYPES = f"SELECT session FROM {TABLE} WHERE type IN ({{types}}) AND "
_POSITIONS_BETWEEN = "id > %s AND id <= %s"
_POSITIONS_UP_TO = "+id <= %s"


def streams_of_types(event_types: Sequence[str], after: int, up_to: int) -> set[str]:
    """The streams with a row of one of `event_types` at a position in (after, up_to]."""
    select = _STREAMS_OF_TYPES.format(types=", ".join(["%s"] * len(event_types)))
    if after:
        sql, params = select + _POSITIONS_BETWEEN, [*event_types, after, up_to]
    else:
        sql, params = select + _POSITIONS_UP_TO, [*event_types, up_to]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {stream for (stream,) in cursor.fetchall()}


# A JSON array of ids (one parameter, however many ids) as a table `s` of one column,
# `s.value`.
_EACH_STREAM = {
    "sqlite": "json_each(%s) AS s",
    "postgresql": "jsonb_array_elements_text(%s::jsonb) AS s(value)",
}


# How to tell SQLite, which keeps no statistics, that a condition nearly always holds,
# so that it reads by the other, narrow one: the closes above the open-sessions
# watermark are a few rows by id, and all the old ones by close time.
_LIKELY = {"sqlite": "likelihood({}, 0.99)", "postgresql": "{}"}


def likely(condition: str) -> str:
    """`condition`, marked for the planner as true for nearly every row."""
    return _LIKELY[connection.vendor].format(condition)


# A column whose terms must not choose the index (SQLite's unary plus).
_NOT_BY_INDEX = {"sqlite": "+{}", "postgresql": "{}"}


def json_array_rows() -> str:
    """The ids of a JSON array parameter as rows, for `IN (…)`."""
    return f"SELECT s.value FROM {_EACH_STREAM[connection.vendor]}"


# A column's membership in a list of ids given as one parameter (`ids_param`): SQLite
# reads a JSON array; PostgreSQL takes an array, whose length its planner sees (of a
# JSON array's elements it guesses 100, and would then rather scan the whole table
# than probe an index for one plan's stream: 33 ms at 330,000 events, and growing).
_ONE_OF = {
    "sqlite": "{} IN (SELECT value FROM json_each(%s))",
    "postgresql": "{} = ANY(%s::text[])",
}


def one_of(column: str) -> str:
    """SQL: `column` is one of the ids of an `ids_param`."""
    return _ONE_OF[connection.vendor].format(column)


def ids_param(ids: Iterable[str]) -> object:
    """A list of ids as the one parameter `one_of` takes."""
    return json.dumps(list(ids)) if connection.vendor == "sqlite" else list(ids)


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


def _per_stream(sql: str, streams: Sequence[str], params: Sequence = ()) -> list[tuple]:
    """Rows of `sql`, which reads the given streams from `{each}` (after `params`)."""
    with connection.cursor() as cursor:
        cursor.execute(
            sql.format(each=_EACH_STREAM[connection.vendor]),
            [*params, json.dumps(list(streams))],
        )
        return cursor.fetchall()


def moment_read(moment: datetime | str) -> datetime:
    """A timestamp read on a plain cursor (SQLite may give a subquery's as text)."""
    return aware_utc(datetime.fromisoformat(moment) if isinstance(moment, str) else moment)


_END_OF_TIME = datetime.max.replace(tzinfo=UTC)


def blocked_run_starts(streams: Sequence[str], at: datetime = _END_OF_TIME) -> dict[str, datetime]:
    """For each of `streams`, its first block after its last unblock (where its current
    blocked run began), if any; as of `at`, if given."""
    moment = moment_param(at)
    return {
        stream: moment_read(start)
        for stream, start in _per_stream(_RUN_STARTS, streams, [moment, moment])
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
    return {stream: length for stream, length in _per_stream(_LENGTHS, streams) if length}


# Plans -------------------------------------------------------------------------------

# Each session started on a node of the given plans, with its close's outcome: what the
# node states need, read off the start and close rows (indexed), whatever the sessions'
# lengths.
_NODE_SESSIONS = (
    "SELECT s.plan, s.session, s.node, s.timestamp, c.type, c.outcome, c.timestamp"
    f" FROM {TABLE} s LEFT JOIN {TABLE} c"
    f" ON c.session = s.session AND c.type = '{vocabulary.CLOSE}'"
    f" WHERE s.type = '{vocabulary.START}' AND {{plan_is_one_of}}"
)


def _ending(close: str | None, outcome: str | None, closed_at) -> tuple:
    """A node session's (outcome, close time) from its close's columns (both None while
    it is not closed; a close without an outcome is done)."""
    if close is None:
        return None, None
    return outcome or vocabulary.DONE, aware_utc(closed_at)


def node_sessions_of(plans: Sequence[str]) -> dict[str, list[NodeSession]]:
    """The node sessions of each of `plans` (those that have any)."""
    found: dict[str, list[NodeSession]] = {}
    sql = _NODE_SESSIONS.format(plan_is_one_of=one_of("s.plan"))
    for plan, session, node, opened, closed, outcome, closed_at in run_prepared(
        sql, [ids_param(plans)]
    ):
        ended = _ending(closed, outcome, closed_at)
        found.setdefault(plan, []).append(NodeSession(session, node, aware_utc(opened), *ended))
    return found


def node_sessions(plan: str) -> list[NodeSession]:
    return node_sessions_of([plan]).get(plan, [])


# For `plan_sessions`: a plan's starts above a position with their closes (part 0), the
# closes of the given sessions (part 1), and how many starts on the plan there are at or
# below the position (part 2).
_NODE_SESSIONS_AFTER = (
    "SELECT 0, s.id, s.session, s.node, s.timestamp, c.type, c.outcome, c.timestamp,"
    f" s.actor, s.idempotency_key FROM {TABLE} s LEFT JOIN {TABLE} c"
    f" ON c.session = s.session AND c.type = '{vocabulary.CLOSE}'"
    f" WHERE s.type = '{vocabulary.START}' AND s.plan = %s AND s.id > %s"
    " UNION ALL SELECT 1, NULL, c.session, NULL, NULL, c.type, c.outcome, c.timestamp,"
    f" NULL, NULL FROM {TABLE} c WHERE c.type = '{vocabulary.CLOSE}'"
    " AND {session_is_one_of}"
    " UNION ALL SELECT 2, COUNT(*), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"
    f" FROM {TABLE} WHERE type = '{vocabulary.START}' AND plan = %s AND id <= %s"
)


class NodeStart(NamedTuple):
    """A start on a plan's node, as `node_sessions_after` finds it."""

    position: int
    session: NodeSession
    key: tuple[str, str] | None  # (actor, idempotency key), when it was made under one


def node_sessions_after(
    plan: str, position: int, sessions: Sequence[str]
) -> tuple[list[NodeStart], dict[str, tuple[str, datetime]], int]:
    """What changed of a plan's node sessions since `position`, for a caller that knows
    them up to it: the starts on the plan above it; the outcome and close time of those
    of `sessions` that are closed; and how many starts on the plan there are at or below
    it (telling whether the table still holds what was known)."""
    sql = _NODE_SESSIONS_AFTER.format(session_is_one_of=one_of("c.session"))
    rows = run_prepared(sql, [plan, position, ids_param(sessions), plan, position])
    started, closed, below = [], {}, 0
    for part, number, session, node, opened, close, outcome, closed_at, actor, key in rows:
        if part == 2:
            below = number
            continue
        ended = _ending(close, outcome, closed_at)
        if part == 0:
            found = NodeSession(session, node, aware_utc(opened), *ended)
            started.append(NodeStart(number, found, (actor, key) if key is not None else None))
        else:
            closed[session] = ended
    return started, closed, below


_PLANS_SQL = f"SELECT session FROM {TABLE} WHERE type = '{vocabulary.PLAN_CREATE}'"


def plan_ids(created_by: datetime | None = None) -> list[str]:
    """Every plan's id (those created by `created_by`, if given), the newest first."""
    sql, params = _PLANS_SQL, []
    if created_by is not None:
        sql, params = sql + " AND timestamp <= %s", [moment_param(created_by)]
    with connection.cursor() as cursor:
        cursor.execute(sql + " ORDER BY id DESC", params)
        return [plan for (plan,) in cursor.fetchall()]


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
# The flow metrics' folds, in one statement over the events of the sessions alive in a
# window: each event paired with the next of its stream (how long its status lasted),
# then one grouping by session gives its last event, its start, its time blocked and in
# review, and, for the cumulative flow, the few events whose status outlasted a midnight
# (the others add and remove themselves on the same day). The databases pair events in
# different ways, and differ in moments:
# - SQLite joins each event to the next by its seq. Its rows then arrive in stream order,
#   so it groups them as they come; a window function (LEAD) would hide that order and
#   cost a sort of every event (at 490,000 events: 1.7 s against 1.15 on SQLite 3.40, 1.1
#   against 0.84 on 3.51). Its moments are text, parsed only where an aggregate needs
#   them (SQLite computes a joined column again at each use); a text comparison of
#   dates rules most events out of the midnight test before any parsing.
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
        source=f"{TABLE} e LEFT JOIN {TABLE} n ON n.session = e.session AND n.seq = e.seq + 1"
        " WHERE e.session IN ({alive}) GROUP BY e.session",
        type="e.type",
        outcome="e.outcome",
        at="{microseconds[e]}",
        next_at="{microseconds[n]}",
        last="n.seq IS NULL",
        # Moments of one date, neither at midnight to the second, share their first
        # midnight (the next day's): no parsing needed to rule them out.
        maybe_crossing="(substr(e.timestamp, 1, 10) <> substr(n.timestamp, 1, 10)"
        " OR substr(e.timestamp, 12, 8) = '00:00:00' OR substr(n.timestamp, 12, 8) = '00:00:00')",
        microseconds="{}",
        whole_seconds="CAST({} AS BIGINT) / 1000000",
        no_time="0",
        first_midnight=_day_number("{}", ceiling=True),
        joined="group_concat({}, ',')",
    ),
    "postgresql": _Pairs(
        source="(SELECT session, type, outcome, timestamp AS at, LEAD(timestamp) OVER"
        f" (PARTITION BY session ORDER BY seq) AS next_at FROM {TABLE}"
        " WHERE session IN ({alive})) AS pairs GROUP BY session",
        type="type",
        outcome="outcome",
        at="at",
        next_at="next_at",
        last="next_at IS NULL",
        maybe_crossing="TRUE",
        microseconds=_MICROSECONDS["postgresql"],
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
        started_by=likely(_NOT_BY_INDEX[vendor].format("s.timestamp") + " < %(until)s"),
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
    microseconds = (_microseconds("e.timestamp"), _microseconds("n.timestamp"))
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
    per_day = Counter()
    for close, count in Counter(_listed(closes)).items():
        day, outcome = close.split(" ")
        per_day[int(day), outcome] = count
    changes = Counter()
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


def closed_before(moment: datetime) -> int:
    """How many sessions were closed before `moment`."""
    with connection.cursor() as cursor:
        cursor.execute(_CLOSED_BEFORE, [moment_param(moment)])
        return cursor.fetchone()[0]


def read_streams(streams: Sequence[str]) -> dict[str, list[EventRecord]]:
    """Whole streams, each in stream order, keyed by id (those that exist)."""
    found: dict[str, list[EventRecord]] = {}
    with reading_cursor() as cursor:
        cursor.execute(
            f"SELECT {_RECORD_COLUMNS} FROM {TABLE} WHERE {one_of('session')}"
            " ORDER BY session, seq",
            [ids_param(streams)],
        )
        for record in records_from_rows(cursor.fetchall()):
            found.setdefault(record.session, []).append(record)
    return found
