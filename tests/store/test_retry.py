"""A lost database connection is retried with growing pauses, then reported; so a view
that retries needs no health check of its connection first."""

import pytest
from django.db import OperationalError, connection, connections

from sessions import store
from sessions.http import retrying
from sessions.store import connections as retry
from sessions.store.database import run_prepared
from tests.support.faults import lost_connection


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch):
    monkeypatch.setattr(retry, "PAUSES", (0, 0, 0, 0, 0))


def flaky(failures):
    calls = []

    def view():
        calls.append(1)
        if len(calls) <= failures:
            raise lost_connection()
        return "answered"

    return view, calls


@pytest.mark.django_db(transaction=True)
def test_two_lost_connections_in_a_row_still_get_an_answer():
    view, calls = flaky(2)
    assert retrying(view)() == "answered"
    assert len(calls) == 3


@pytest.mark.django_db(transaction=True)
def test_a_database_that_stays_unreachable_is_reported_after_every_attempt():
    view, calls = flaky(99)
    with pytest.raises(retry.DatabaseUnavailable):
        retrying(view)()
    assert len(calls) == len(retry.PAUSES)


@pytest.fixture
def health_checks(monkeypatch):
    """The settings' health checks on a reused connection, and how often they ran."""
    checks, database = [], connections["default"]
    monkeypatch.setattr(database, "health_check_enabled", True)
    usable = database.is_usable
    monkeypatch.setattr(database, "is_usable", lambda: checks.append(1) or usable())
    return checks


def reused(view):
    """Run `view` as a request on a connection kept from an earlier one."""
    connection.ensure_connection()
    connection.close_if_unusable_or_obsolete()  # what a request's start does
    return view()


@pytest.mark.django_db(transaction=True)
def test_a_retried_view_asks_no_health_check_of_its_connection(health_checks):
    assert reused(retrying(lambda: store.stream_ends("nothing"))) == []
    assert health_checks == []


@pytest.mark.django_db(transaction=True)
def test_any_other_view_still_checks_its_connection_first(health_checks):
    assert reused(lambda: store.stream_ends("nothing")) == []
    assert health_checks == [1]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="psycopg's parameter limit")
@pytest.mark.django_db(transaction=True)
def test_a_statement_refused_on_a_good_connection_is_not_run_again():
    """psycopg says OperationalError for a statement of more than 65,535 parameters too:
    run again, it would only fail again (issue 52: six runs, then a 503)."""
    calls = []

    def view():
        calls.append(1)
        marks = ", ".join(["%s"] * 70_000)  # bound by the server, as the hot statements are
        run_prepared(f"SELECT 1 WHERE 1 IN ({marks})", list(range(70_000)))

    with pytest.raises(OperationalError, match="number of parameters"):
        retrying(view)()
    assert len(calls) == 1


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's own errors")
@pytest.mark.django_db(transaction=True)
def test_on_sqlite_a_statement_it_cannot_run_is_not_run_again():
    calls = []

    def view():
        calls.append(1)
        run_prepared("SELECT no_such_column FROM tower_event", [])

    with pytest.raises(OperationalError, match="no such column"):
        retrying(view)()
    assert len(calls) == 1


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's own errors")
@pytest.mark.django_db(transaction=True)
def test_on_sqlite_a_locked_database_is_tried_again():
    calls = []

    def view():
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("database is locked")
        return "answered"

    assert retrying(view)() == "answered" and len(calls) == 2
