"""A form posted while the database connection drops: run again on a new connection,
or, when the database stays away, a 503 saying nothing was saved, the post shown again."""

import pytest
from django.contrib.auth import middleware

from sessions.domain.vocabulary import START
from sessions.models import Event
from sessions.store import connections
from tests.support.faults import lost_connection

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch):
    monkeypatch.setattr(connections, "PAUSES", (0, 0, 0, 0, 0))


def losing_the_user(monkeypatch, failures):
    """Reading the signed-in user (before any view runs) loses the connection
    `failures` times."""
    real, calls = middleware.get_user, []

    def get_user(request):
        calls.append(1)
        if len(calls) <= failures:
            raise lost_connection()
        return real(request)

    monkeypatch.setattr(middleware, "get_user", get_user)
    return calls


def test_a_form_whose_connection_drops_before_the_view_is_run_again(alice_client, monkeypatch):
    calls = losing_the_user(monkeypatch, 2)
    answer = alice_client.post("/sessions/start", {"title": "Write the docs"})
    assert answer.status_code == 302
    assert len(calls) == 3
    assert Event.objects.filter(type=START, title="Write the docs").count() == 1


def test_a_database_that_stays_away_gets_a_503_saying_nothing_was_saved(alice_client, monkeypatch):
    losing_the_user(monkeypatch, 99)
    answer = alice_client.post("/sessions/start", {"title": "Write <the> docs"})
    page = answer.content.decode()
    assert answer.status_code == 503
    assert "The database is unreachable; try again shortly. Nothing was saved." in page
    assert "Write &lt;the&gt; docs</textarea>" in page
    assert 'action="/sessions/start"' in page
    monkeypatch.undo()
    assert not Event.objects.exists()


def test_a_page_read_while_the_database_stays_away_gets_a_503(alice_client, monkeypatch):
    losing_the_user(monkeypatch, 99)
    answer = alice_client.get("/plans/")
    assert answer.status_code == 503
    assert "Try again" in answer.content.decode()
