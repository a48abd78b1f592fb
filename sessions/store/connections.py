"""A request that loses its database connection runs again on a new one.

Every append carries an idempotency key (the client's, or one the surface made for the
request), so a later run returns the event an earlier one may have committed instead
of appending it twice: the caller gets a success, or nothing was written.
"""

import contextlib
import functools
import time
import uuid
from collections.abc import Callable, Iterator

from django.db import DatabaseError, InterfaceError, OperationalError, connection
from django.http import HttpRequest

# The pause before each run, in seconds. A dropped backend or a restarting server takes
# moments to come back, and on a busy machine one request can lose several connections
# in a row (the PostgreSQL fault test's requests did, with both cores loaded, losing
# five in three quarters of a second): so six runs over a second and a half, then the
# caller hears the database is unreachable.
PAUSES = (0, 0.05, 0.1, 0.2, 0.4, 0.8)


class DatabaseUnavailable(Exception):
    """The database could not be reached, on every attempt."""


def retrying(view: Callable) -> Callable:
    """`view`, run again on a new connection when it loses its own.

    So it skips Django's health check (a `SELECT 1` round trip before the request's first
    statement, a sixth of an append's time on PostgreSQL): a dead connection fails the
    first statement instead, and the view runs again."""

    @functools.wraps(view)
    def run(*args: object, **kwargs: object) -> object:
        connection.health_check_done = True
        for pause in PAUSES:
            if pause:  # even sleep(0) gives up the core: the first run must not wait
                time.sleep(pause)
            try:
                return view(*args, **kwargs)
            except (OperationalError, InterfaceError):
                if connection.in_atomic_block:
                    raise  # an outer transaction is lost: only its owner can start over
                connection.close()
        raise DatabaseUnavailable

    return run


def server_key(request: HttpRequest, prefix: str) -> str:
    """An idempotency key made for this request, the same on every run of it, so that
    running it again after a lost connection returns the event it appended instead of
    appending twice."""
    if not hasattr(request, "_tower_key"):
        request._tower_key = f"{prefix}-{uuid.uuid4().hex}"
    return request._tower_key


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
