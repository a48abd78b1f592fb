"""A lost database connection is retried with growing pauses, then reported."""

import pytest
from django.db import OperationalError

from sessions import retry


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch):
    monkeypatch.setattr(retry, "PAUSES", (0, 0, 0, 0, 0))


def flaky(failures):
    calls = []

    def view():
        calls.append(1)
        if len(calls) <= failures:
            raise OperationalError("server closed the connection unexpectedly")
        return "answered"

    return view, calls


@pytest.mark.django_db(transaction=True)
def test_two_lost_connections_in_a_row_still_get_an_answer():
    view, calls = flaky(2)
    assert retry.retrying(view)() == "answered"
    assert len(calls) == 3


@pytest.mark.django_db(transaction=True)
def test_a_database_that_stays_unreachable_is_reported_after_every_attempt():
    view, calls = flaky(99)
    with pytest.raises(retry.DatabaseUnavailable):
        retry.retrying(view)()
    assert len(calls) == len(retry.PAUSES)
