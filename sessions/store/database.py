"""What every statement of the store shares: the table and its columns, rows read as
`EventRecord`s, moments written and read, hot statements run prepared, and the small
SQL pieces that differ between SQLite and PostgreSQL."""

import functools
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from decimal import Decimal

from django.core.exceptions import EmptyResultSet
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper
from django.db.models import QuerySet

from sessions.domain import vocabulary
from sessions.domain.records import EventRecord

TABLE = "tower_event"
# The columns (and model fields) whose names differ from their events' fields: `commit`
# and `check` are SQL keywords, `check` a model's method and `model` a model's own word.
COLUMN_OF = {"commit": "commit_sha", "check": "check_name", "model": "usage_model"}
# An event's stored columns after its id, in `EventRecord` order: the one field list that
# every statement below is built from.
RECORD_COLUMN_NAMES = tuple(COLUMN_OF.get(name, name) for name in EventRecord._fields)
COLUMNS = (*RECORD_COLUMN_NAMES, "idempotency_key")
RECORD_COLUMNS = ", ".join(RECORD_COLUMN_NAMES)
# The same columns as SQLite expressions (`+column` gives the value as it is): an
# expression has no declared type, so the sqlite3 module neither looks up a converter for
# each of the 35 columns on every run nor parses each timestamp in Python through
# Django's (`records_from_rows` parses the text in C). For SQLite's hottest reads.
SQLITE_RECORD_VALUES = ", ".join(f"+{name}" for name in RECORD_COLUMN_NAMES)
SEQ_INDEX = EventRecord._fields.index("seq")  # where a row as stored holds its seq


def current_database() -> BaseDatabaseWrapper:
    """The default database's wrapper for this thread, looked up once by a hot function:
    each `connection.<attribute>` looks it up again (a sixth of an append's own time)."""
    return connections[DEFAULT_DB_ALIAS]


# A walk newest first that stops at its page: on PostgreSQL, whatever the statistics say.
_WALK_NEWEST_FIRST = (
    "SELECT set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true),"
    " set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true)"
)


@contextmanager
def walking_an_index() -> Iterator[None]:
    """Where a query whose right plan is known (walk an index in its order, stop at the
    `LIMIT`) runs on PostgreSQL with that plan whatever the statistics say: sorting,
    bitmap and sequential scans are priced out for its transaction alone. With the
    statistics of a table it believed tiny (never analysed: autovacuum not yet round
    after a bulk import), the planner sorted every event instead (bench/session_list.py).
    JIT goes too: the priced-out costs would set it off, for 77 ms of compiling."""
    if current_database().vendor != "postgresql":
        yield
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_WALK_NEWEST_FIRST)
        yield


def moment_param(moment: datetime) -> str | datetime | None:
    """A moment as a parameter of hand-written SQL, in the form the table stores: the
    SQLite driver would send an aware datetime with its offset ("+00:00"), which as text
    sorts after the same moment stored without one."""
    return current_database().ops.adapt_datetimefield_value(moment)


def aware_utc(timestamp: datetime) -> datetime:
    """A timestamp read on a plain cursor: SQLite gives naive UTC, PostgreSQL aware."""
    return timestamp if timestamp.tzinfo else timestamp.replace(tzinfo=UTC)


# The graph fields are JSON text in their columns, the last of an `EventRecord`'s.
_JSON_START = len(EventRecord._fields) - len(vocabulary.JSON_FIELDS)
assert EventRecord._fields[_JSON_START:] == vocabulary.JSON_FIELDS
_BUDGET = EventRecord._fields.index("budget_usd") - 4
_PATHS = EventRecord._fields.index("paths") - 4


def _json_value(text: str | None) -> object:
    return None if text is None else json.loads(text)


def _budget_value(stored: object) -> int | float | None:
    """A budget as the event gave it, a JSON number (PostgreSQL's numeric, SQLite's
    integer or real, as each stores the decimal column)."""
    if stored is None or isinstance(stored, int):
        return stored
    exact = Decimal(str(stored))
    return int(exact) if exact == exact.to_integral_value() else float(exact)


# A record made from its values in one call (`_make`): its class's `__new__` takes the 34
# fields one by one, a fifth of reading a view's events.
_record = EventRecord._make


def records_from_rows(rows: Sequence[Sequence]) -> list[EventRecord]:
    records = []
    for stream, seq, kind, timestamp, *rest in rows:
        if kind in vocabulary.PLAN_EVENT_TYPES:
            rest[_JSON_START - 4 :] = map(_json_value, rest[_JSON_START - 4 :])
            rest[_BUDGET] = _budget_value(rest[_BUDGET])
        elif kind == vocabulary.PROGRESS and rest[_PATHS] is not None:
            rest[_PATHS] = json.loads(rest[_PATHS])
        records.append(_record((stream, seq, kind, moment_read(timestamp), *rest)))
    return records


def _as_json(value: object) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def row_params(record: EventRecord, idempotency_key: str | None) -> list:
    """An event's column values for an insert, in `COLUMNS` order."""
    graph = record[_JSON_START:]
    # Most events set no JSON field: their Nones are kept as they are.
    as_json = graph if graph.count(None) == len(graph) else map(_as_json, graph)
    return [
        *record[:3],
        moment_param(record.timestamp),
        *record[4:_JSON_START],
        *as_json,
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
    db = current_database()
    db.ensure_connection()
    with db.wrap_database_errors:
        if db.vendor == "postgresql":
            rows = _run_prepared_postgresql(db, sql, params)
        else:
            rows = db.connection.execute(_qmark(sql), params).fetchall()
    if db.queries_logged:  # seen by debug tools and query-count tests too
        db.queries_log.append({"sql": sql, "time": "0.000"})
    return rows


@functools.lru_cache(maxsize=64)
def _placeholders(sql: str) -> int:
    return sql.count("%s")


def run_for_stream(sql: str, stream: str) -> list[tuple]:
    """`run_prepared` of a statement whose every parameter is one stream's id."""
    return run_prepared(sql, [stream] * _placeholders(sql))


def _run_prepared_postgresql(db: BaseDatabaseWrapper, sql: str, params: Sequence) -> list[tuple]:
    # One server-bound cursor per connection, made once: making one (and its loaders)
    # for every statement cost as much as sending it.
    kept = getattr(db, "_tower_prepared", None)
    if kept is None or kept[0] is not db.connection:
        import psycopg
        from psycopg.types.datetime import TimestamptzLoader

        cursor = psycopg.Cursor(db.connection)
        cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
        # Kept on the wrapper, a field of which the stubs do not let us name.
        kept = db._tower_prepared = (db.connection, cursor)  # type: ignore[attr-defined]
    kept[1].execute(sql, params, prepare=True)
    return kept[1].fetchall()


@functools.cache
def _qmark(sql: str) -> str:
    """A statement written with Django's placeholders (%s) in SQLite's (?)."""
    return re.sub(r"(?<!%)%s", "?", sql).replace("%%", "%")


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


# The index a branch must read by, on SQLite. It keeps no statistics and, of two indexes
# that serve a branch, takes the one that matches more of its terms: for "the latest
# progress that bears a note" that was (session, type, seq), which walks every heartbeat
# of the stream to find one (15 ms at 20,000 heartbeats, growing), not the partial index
# of noted progress, which finds it at once. PostgreSQL's planner has its statistics.
_BY_INDEX = {"sqlite": " INDEXED BY {}", "postgresql": ""}


def by_index(index: str, vendor: str | None = None) -> str:
    """SQL to follow a table's name: read it by `index` (on SQLite; nothing elsewhere)."""
    return _BY_INDEX[vendor or current_database().vendor].format(index)


# A column whose terms must not choose the index (SQLite's unary plus).
NOT_BY_INDEX = {"sqlite": "+{}", "postgresql": "{}"}


def json_array_rows() -> str:
    """The ids of a JSON array parameter as rows, for `IN (…)`."""
    return f"SELECT s.value FROM {_EACH_STREAM[connection.vendor]}"


_COLUMN_ELEMENTS = {
    "sqlite": "json_each({column}) AS {alias}",
    "postgresql": "jsonb_array_elements_text({column}::jsonb) AS {alias}(value)",
}


def column_elements(column: str, alias: str) -> str:
    """The elements of a JSON array held in a text column, as a table `alias` of one
    column, `alias.value` (for a join)."""
    return _COLUMN_ELEMENTS[connection.vendor].format(column=column, alias=alias)


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


def ids_param(ids: Iterable[str]) -> str | list[str]:
    """A list of ids as the one parameter `one_of` takes."""
    return json.dumps(list(ids)) if connection.vendor == "sqlite" else list(ids)


def each_stream() -> str:
    """SQL for a JSON array parameter of stream ids as a table `s` of one column,
    `s.value` (the `{each}` of `per_stream`'s statements)."""
    return _EACH_STREAM[connection.vendor]


def per_stream(
    sql: str, streams: Sequence[str], params: Sequence = (), **parts: str
) -> list[tuple]:
    """Rows of `sql`, which reads the given streams from `{each}` (after `params`), with
    its other `{parts}` written in."""
    with connection.cursor() as cursor:
        sql = sql.format(each=each_stream(), **parts)
        cursor.execute(sql, [*params, json.dumps(list(streams))])
        return cursor.fetchall()


def moment_read(moment: datetime | str) -> datetime:
    """A timestamp read on a plain cursor (SQLite may give a subquery's as text)."""
    return aware_utc(datetime.fromisoformat(moment) if isinstance(moment, str) else moment)


def latest_read(*moments: datetime | str | None) -> datetime:
    """The latest of timestamps read on a plain cursor, those not found (None) left out:
    a session's last activity from its last transition and its keep-alive probes."""
    return max(moment_read(moment) for moment in moments if moment is not None)


# A moment column in whole microseconds since the epoch, per database.
MICROSECONDS_SQL = {
    # Whole seconds from the text without its fraction (a fraction would be rounded),
    # then the six digits of microseconds Django writes after them (none when zero).
    # unixepoch() (SQLite 3.38) parses in a third of strftime's time.
    "sqlite": "(unixepoch(substr({0}, 1, 19)) * 1000000 + CAST(substr({0}, 21, 6) AS INTEGER))",
    "sqlite<3.38": "(CAST(strftime('%%s', substr({0}, 1, 19)) AS INTEGER) * 1000000"
    " + CAST(substr({0}, 21, 6) AS INTEGER))",
    # Exact (numeric); date_part's float8 can miss by a microsecond after 2100.
    "postgresql": "(EXTRACT(EPOCH FROM {0}) * 1000000)::bigint",
}


def microseconds_of(column: str = "timestamp") -> str:
    """SQL for a moment column in whole microseconds since the epoch, on this database."""
    # The backend's driver module, which the stubs' wrapper does not name.
    driver = connection.Database  # type: ignore[attr-defined]
    if connection.vendor == "sqlite" and driver.sqlite_version_info < (3, 38):
        return MICROSECONDS_SQL["sqlite<3.38"].format(column)
    return MICROSECONDS_SQL[connection.vendor].format(column)


def records(rows: QuerySet) -> list[EventRecord]:
    """The events of a queryset of events as `EventRecord`s in stream order, without
    building model instances: the ORM's SQL run on a plain cursor (Django's per-value
    converters were most of the cost of loading a board's or an API response's streams)."""
    try:
        sql, params = _record_rows(rows).query.sql_with_params()
    except EmptyResultSet:  # e.g. `session__in=[]`
        return []
    with reading_cursor(rows.db) as cursor:
        cursor.execute(sql, params)
        return records_from_rows(cursor.fetchall())


def iter_records(rows: QuerySet, chunk_size: int = 2000) -> Iterator[EventRecord]:
    """Like `records`, streamed from the database in chunks (for exports)."""
    for row in _record_rows(rows).iterator(chunk_size=chunk_size):
        yield from records_from_rows([row])


def _record_rows(rows: QuerySet) -> QuerySet:
    return rows.order_by("session", "seq").values_list(*RECORD_COLUMN_NAMES)
