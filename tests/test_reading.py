"""The read side agrees with the pure projections it stands in for."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from sessions import reading
from sessions.models import Event
from tests.conftest import CONFORMANCE, conformance_expected, projected_status

LOGS = sorted(conformance_expected()["sessions"])


@pytest.fixture
def conformance_sessions(db):
    call_command("import_jsonl", str(CONFORMANCE / "logs"), stdout=io.StringIO())


def test_board_rows_give_each_session_its_projected_status(conformance_sessions):
    rows = reading.board_rows(None, None, timezone.now() - timedelta(days=3650))
    assert {session_id for session_id, *_ in rows} == set(LOGS)
    for session_id, status, last_at in rows:
        assert status == projected_status(session_id)
        assert last_at == Event.objects.stream(session_id)[-1].timestamp


@pytest.mark.parametrize("status", ["active", "blocked", "in_review", "closed"])
def test_the_status_filter_agrees_with_the_projection(conformance_sessions, status):
    listed = set(reading.listing(status=status))
    assert listed == {s for s in LOGS if projected_status(s) == status}


def test_the_session_view_of_an_unknown_session_is_none(db):
    assert reading.session_view("nope") is None


def test_the_version_changes_exactly_when_an_event_is_appended(conformance_sessions, alice):
    from sessions.append import append_event

    before = reading.version()
    assert reading.version() == before
    append_event("fresh", "session_start", {"title": "t"}, user=alice)
    assert reading.version() > before
