"""The database connection: transactions, its state, and a call that loses it run again
on a new one (`again_on_lost_connection`, which the surfaces' requests go through:
`sessions.http.retrying`).
"""

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from django.db import DatabaseError, InterfaceError, OperationalError, connection

# The pause before each run, in seconds. A dropped backend or a restarting server takes
# moments to come back, and on a busy machine one request can lose several connections
# in a row (the PostgreSQL fault test's requests did, with both cores loaded, losing
# five in three quarters of a second): so six runs over a second and a half, then the
# caller hears the database is unreachable.
PAUSES = (0, 0.05, 0.1, 0.2, 0.4, 0.8)
T = TypeVar("T")


class DatabaseUnavailable(Exception):
    """The database could not be reached, on every attempt."""

    detail = "The database is unreachable; try again shortly."


class StatementTimedOut(DatabaseUnavailable):
    """A statement ran past `STATEMENT_TIMEOUT_SECONDS` and the database stopped it (run
    again, it would only wait as long again)."""

    detail = (
        "The database stopped this request: it ran longer than the server allows "
        "(STATEMENT_TIMEOUT_SECONDS). Nothing was written; try again, or ask for less."
    )


# PostgreSQL's SQLSTATE for a statement cancelled by statement_timeout.
_QUERY_CANCELED = "57014"


def _timed_out(fault: Exception) -> bool:
    return getattr(fault.__cause__, "sqlstate", None) == _QUERY_CANCELED


# What a lost connection raises: the API's handlers name these to pass them on.
LOST_CONNECTION = (OperationalError, InterfaceError)


def again_on_lost_connection(call: Callable[[], T]) -> T:
    """`call()`, run again on a new connection when it loses its own; `DatabaseUnavailable`
    when every run does.

    So it skips Django's health check (a `SELECT 1` round trip before the request's first
    statement, a sixth of an append's time on PostgreSQL): a dead connection fails the
    first statement instead, and the call runs again."""
    # Django 5.1's flag, which its stubs do not name yet.
    connection.health_check_done = True  # type: ignore[attr-defined]
    for pause in PAUSES:
        if pause:  # even sleep(0) gives up the core: the first run must not wait
            time.sleep(pause)
        try:
            return call()
        except LOST_CONNECTION as fault:
            if connection.in_atomic_block:
                raise  # an outer transaction is lost: only its owner can start over
            if _timed_out(fault):
                raise StatementTimedOut from fault
            if not _connection_lost(fault):
                raise  # a statement the database refused: run again, it would only fail again
            connection.close()
    raise DatabaseUnavailable


# PostgreSQL's SQLSTATEs of a connection ended under the statement: class 08 (connection
# exceptions), and the server shutting down or not yet taking connections.
_ENDED_STATES = ("08", "57P01", "57P02", "57P03")


def _connection_lost(fault: Exception) -> bool:
    """Whether `fault` lost the connection (or found the database busy for a moment),
    rather than a statement the database refused on a connection still good: the
    drivers raise OperationalError for both, and a statement with more parameters than
    the server takes, run six times as if the connection were lost, answered 503."""
    state = getattr(fault.__cause__, "sqlstate", None) or ""
    if state.startswith(_ENDED_STATES):
        return True
    if connection.vendor != "postgresql":
        return isinstance(fault, InterfaceError) or any(
            passing in str(fault).lower() for passing in _SQLITE_PASSING
        )
    raw = connection.connection
    return raw is None or bool(raw.closed) or bool(getattr(raw, "broken", False))


# SQLite's errors worth another run: its file busy or locked by another writer past the
# busy timeout, or out of reach for a moment. Anything else (too many parameters, a
# statement it cannot run) would only fail again.
_SQLITE_PASSING = ("locked", "busy", "disk i/o error", "unable to open database")


@contextlib.contextmanager
def unavailable_on_fault() -> Iterator[None]:
    """Any database error inside becomes `DatabaseUnavailable`, with the connection
    closed, so the next statement opens a new one (a loop that outlives a restart)."""
    try:
        yield
    except DatabaseError as fault:
        connection.close()
        raise DatabaseUnavailable from fault


def close() -> None:
    """Close this thread's connection (a thread that ends, or one that starts over)."""
    connection.close()


def reads_committed_only() -> bool:
    """Whether a read now sees committed rows only: no transaction is open, so nothing
    read can still be rolled back (what a read model may keep)."""
    return not connection.in_atomic_block


def in_nested_transaction() -> bool:
    """Whether the current transaction sits inside another one."""
    return bool(connection.savepoint_ids)


def database_alias() -> str:
    """The alias of the database this thread reads, to keep what is read per database."""
    return connection.alias
