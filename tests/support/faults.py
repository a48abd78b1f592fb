"""Faults as the database driver reports them, for tests that stand in for a real one."""

import psycopg
from django.db import OperationalError


def lost_connection() -> OperationalError:
    """What a request sees when its connection is lost, as psycopg reports a backend the
    server terminated (SQLSTATE 57P01) and Django wraps it."""
    fault = OperationalError("terminating connection due to administrator command")
    fault.__cause__ = psycopg.errors.AdminShutdown(
        "terminating connection due to administrator command"
    )
    return fault
