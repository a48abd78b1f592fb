"""Writing: where an append runs and holds its streams (SQLite's one writer at a time,
PostgreSQL's advisory locks), a stream's ends, idempotency keys, and the inserts."""

import fcntl
import functools
import operator
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from itertools import compress
from typing import TextIO

from django.db import IntegrityError, connection, transaction

from sessions.domain import vocabulary
from sessions.domain.records import EventRecord
from sessions.store.database import (
    COLUMNS,
    RECORD_COLUMNS,
    SQLITE_RECORD_VALUES,
    TABLE,
    current_database,
    reading_cursor,
    records_from_rows,
    row_params,
    run_prepared,
)

# Writers ------------------------------------------------------------------------------

# SQLite has one writer at a time. Writers queue for it here rather than in SQLite's busy
# handler, which polls in growing sleeps (1, 2, 5, 10 ms…): threads of one process on a
# lock, processes (gunicorn workers) on an exclusive lock of a file beside the database,
# which the kernel hands to the next waiter as soon as it is released.
_SQLITE_THREADS = threading.Lock()
_sqlite_lock_files: dict = {}


def _sqlite_lock_file() -> TextIO:
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


class RaceLost(Exception):
    """Another writer appended to one of these streams first: read the new tail and try
    again (the append's own transaction, if any, was rolled back)."""


@contextmanager
def holding(*streams: str) -> Iterator[None]:
    """A transaction that holds `streams` against every other writer, taken in the
    order given (a plan before a session on its node, always).

    SQLite: the writers' queue, then `BEGIN IMMEDIATE` (the settings' transaction mode).
    PostgreSQL: a transaction-scoped advisory lock on each stream's id.
    """
    vendor = current_database().vendor
    queue = _sqlite_writer_turn() if vendor == "sqlite" else nullcontext()
    try:
        with queue, transaction.atomic():
            if vendor == "postgresql":
                # One round trip: the locks, in the order given, then the transaction id,
                # taken before any event id, which is what lets readers tell when no lower
                # event id can still commit (`SafePosition`).
                locks = ", ".join([_LOCK] * len(streams))
                run_prepared(f"SELECT {locks}, pg_current_xact_id()", list(streams))
            yield
    except IntegrityError as error:  # a row another writer took first: rolled back
        raise RaceLost(streams) from error


def hold_also(*streams: str) -> None:
    """Inside `holding`: hold `streams` too, from here to the end of its transaction
    (PostgreSQL's advisory locks; on SQLite the one writer's turn holds every stream).
    Taken after the streams `holding` took, as every writer takes them: a plan first."""
    if streams and current_database().vendor == "postgresql":
        run_prepared("SELECT " + ", ".join([_LOCK] * len(streams)), list(streams))


@contextmanager
def appending(*streams: str, locked: bool = False) -> Iterator[None]:
    """Where one append runs (its reads, its rules and its `insert`): `holding` its
    streams, except on PostgreSQL for an append to one stream, not `locked`, outside any
    transaction. That one holds nothing while it reads the stream in autocommit; its
    insert is a transaction of its own, sent in one round trip, that takes the stream's
    lock first (so it never slips between a holder's read and insert), and the unique
    (session, seq) decides a race: the loser's insert raises `RaceLost`, and it tries
    again holding the stream, where it cannot lose. Five round trips (begin, lock,
    read, insert, commit) become two. An append that spans streams (a start on a plan's
    node holds the plan) always holds them, and so does SQLite, where writers take turns
    anyway and queue best on its file lock."""
    db = current_database()
    if not locked and len(streams) == 1 and db.vendor == "postgresql" and not db.in_atomic_block:
        try:
            yield
        except IntegrityError as error:  # another writer took the seq first
            raise RaceLost(streams) from error
        return
    with holding(*streams):
        yield


# The append's statements are plain SQL: building them through the ORM cost three
# quarters of an append's time (bench/append_inprocess.py, bench/RESULTS.md). Each probe
# has one index that serves it whatever the planner's statistics say: with none yet (a
# new table), PostgreSQL found a stream's ends by walking the whole stream, and an
# idempotency key by walking every event of its actor.
_ENDS_SQL = (
    f"SELECT {RECORD_COLUMNS} FROM {TABLE} WHERE session = %s AND seq = 1 UNION ALL"
    f" SELECT * FROM (SELECT {RECORD_COLUMNS} FROM {TABLE} WHERE session = %s"
    " ORDER BY seq DESC LIMIT 1) AS last_event"
)
_KEY_SQL = (
    f"SELECT {RECORD_COLUMNS} FROM {TABLE}"
    " WHERE session = %s AND actor = %s AND idempotency_key = %s"
)


# Whether a column's value is set (not None), asked of each value in C.
_is_set = functools.partial(operator.is_not, None)


@functools.lru_cache(maxsize=256)
def _insert_sql(columns: tuple[str, ...], keyed: str | None = None) -> str:
    """An insert of an event's `columns`, those it sets (one it leaves out is NULL:
    binding a None cost SQLite's module a microsecond, five times a text's, and an event
    sets a third of the columns), returning its id. `keyed`, a vendor: unless the
    actor's idempotency key is already on the stream, in the same statement. PostgreSQL
    checks the key in the unique index it arbitrates on; SQLite cannot (its trigger
    refusing replacement fires before any conflict clause), so it asks first, with the
    stream, actor and key bound after the values."""
    into = f"INSERT INTO {TABLE} ({', '.join(columns)})"
    values = ", ".join(["%s"] * len(columns))
    if keyed == "sqlite":
        return (
            f"{into} SELECT {values} WHERE NOT EXISTS (SELECT 1 FROM {TABLE}"
            " WHERE session = %s AND actor = %s AND idempotency_key = %s) RETURNING id"
        )
    conflict = (
        " ON CONFLICT (session, actor, idempotency_key) WHERE idempotency_key IS NOT NULL"
        " DO NOTHING"
        if keyed
        else ""
    )
    return f"{into} VALUES ({values}){conflict} RETURNING id"


STREAM_SQL = f"SELECT {RECORD_COLUMNS} FROM {TABLE} WHERE session = %s ORDER BY seq"


def stream_ends(stream: str) -> list[EventRecord]:
    """The stream's first and last events (one when they are the same; none if empty)."""
    with reading_cursor() as cursor:
        cursor.execute(_ENDS_SQL, [stream, stream])
        rows = records_from_rows(cursor.fetchall())
    return rows[:1] if len(rows) == 2 and rows[0].seq == rows[1].seq else rows


_TAIL_SQL = f"SELECT {RECORD_COLUMNS} FROM {TABLE} WHERE session = %s ORDER BY seq DESC LIMIT 1"


def stream_tail(stream: str) -> tuple | None:
    """The stream's last row as stored, unparsed (None for no such stream): it tells
    whether the stream has grown since it was last read, in one index probe."""
    rows = run_prepared(_TAIL_SQL, [stream])
    return rows[0] if rows else None


@functools.cache
def _last_event_sql(vendor: str) -> str:
    columns = SQLITE_RECORD_VALUES if vendor == "sqlite" else RECORD_COLUMNS
    return f"SELECT {columns} FROM {TABLE} WHERE session = %s ORDER BY seq DESC LIMIT 1"


def last_event(stream: str) -> EventRecord | None:
    """The stream's last event (None for no such stream), in one index probe."""
    rows = run_prepared(_last_event_sql(current_database().vendor), [stream])
    return records_from_rows(rows)[0] if rows else None


def key_event(stream: str, actor: str, key: str) -> EventRecord | None:
    """The event `actor` appended to `stream` under idempotency `key`, if any."""
    with reading_cursor() as cursor:
        cursor.execute(_KEY_SQL, [stream, actor, key])
        rows = records_from_rows(cursor.fetchall())
    return rows[0] if rows else None


_CLAIM_KEY_SQL = (
    f"SELECT {RECORD_COLUMNS} FROM {TABLE} WHERE plan = %s AND type = '{vocabulary.START}'"
    " AND actor = %s AND idempotency_key = %s"
)


def claim_event(plan: str, actor: str, key: str) -> EventRecord | None:
    """The start on a node of `plan` that `actor` made under idempotency `key`, if any."""
    rows = records_from_rows(run_prepared(_CLAIM_KEY_SQL, [plan, actor, key]))
    return rows[0] if rows else None


# A start (seq 1) that an actor made under a key, whatever its stream's id: how a retried
# start that named no id finds the one it made (the partial index `tower_event_keyed_starts`).
_START_KEY_SQL = (
    f"SELECT {RECORD_COLUMNS} FROM {TABLE} WHERE actor = %s AND idempotency_key = %s"
    " AND seq = 1 AND type = %s ORDER BY id LIMIT 1"
)


def start_by_key(actor: str, key: str, event_type: str) -> EventRecord | None:
    """The start of `event_type` (a session's or a plan's) that `actor` made under
    idempotency `key`, on any stream, if any."""
    rows = records_from_rows(run_prepared(_START_KEY_SQL, [actor, key, event_type]))
    return rows[0] if rows else None


def insert(record: EventRecord, idempotency_key: str | None = None) -> int | None:
    """Insert one event (inside `appending`): its position, or None when the event's actor
    has already appended to its stream under `idempotency_key` (nothing is written)."""
    db = current_database()
    keyed = db.vendor if idempotency_key is not None else None
    values = row_params(record, idempotency_key)
    given = list(map(_is_set, values))
    params = list(compress(values, given))
    sql = _insert_sql(tuple(compress(COLUMNS, given)), keyed)
    if keyed == "sqlite":
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
            _insert_sql(COLUMNS).removesuffix(" RETURNING id"),
            [row_params(record, None) for record in records],
        )
