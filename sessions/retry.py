"""A request that loses its database connection runs once more on a new one.

Every append carries an idempotency key (the client's, or one the surface made for the
request), so the second run returns the event the first one may have committed instead
of appending it twice: the caller gets a success, or nothing was written.
"""

import functools
from collections.abc import Callable

from django.db import InterfaceError, OperationalError, connection

ATTEMPTS = 2


class DatabaseUnavailable(Exception):
    """The database could not be reached, on every attempt."""


def retrying(view: Callable) -> Callable:
    @functools.wraps(view)
    def run(*args, **kwargs):
        for _ in range(ATTEMPTS):
            try:
                return view(*args, **kwargs)
            except (OperationalError, InterfaceError):
                if connection.in_atomic_block:
                    raise  # an outer transaction is lost: only its owner can start over
                connection.close()
        raise DatabaseUnavailable

    return run
