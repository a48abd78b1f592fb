"""A request that loses its database connection runs once more on a new one.

Every append carries an idempotency key (the client's, or one the surface made for the
request), so the second run returns the event the first one may have committed instead
of appending it twice: the caller gets a success, or nothing was written.
"""

import functools
import uuid
from collections.abc import Callable

from django.db import InterfaceError, OperationalError, connection
from django.http import HttpRequest

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


def server_key(request: HttpRequest, prefix: str) -> str:
    """An idempotency key made for this request, the same on every run of it, so that
    running it again after a lost connection returns the event it appended instead of
    appending twice."""
    if not hasattr(request, "_tower_key"):
        request._tower_key = f"{prefix}-{uuid.uuid4().hex}"
    return request._tower_key
