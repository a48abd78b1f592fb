"""The board's Needs attention strip: who needs a person now, longest overdue first, with
the reason and how long; the same rule as the API's `attention`."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions import store
from sessions.domain.vocabulary import BLOCK, REVIEW, START, UNBLOCK
from sessions.readmodels import board as board_model
from sessions.readmodels import session_views
from sessions.rules.append import append_event

pytestmark = pytest.mark.django_db


def started(session_id, user, ago, **fields):
    append_event(session_id, START, {"title": session_id, **fields}, user=user, now=ago)


@pytest.fixture
def histories(alice):
    now = timezone.now()
    started("fresh", alice, now - timedelta(minutes=5))
    started("quiet", alice, now - timedelta(hours=2))  # stale by 1 h 30 min
    started("stuck", alice, now - timedelta(hours=12))
    append_event(
        "stuck", BLOCK, {"reason": "waiting on vendor"}, user=alice, now=now - timedelta(hours=10)
    )
    append_event(
        "stuck", BLOCK, {"reason": "and on legal"}, user=alice, now=now - timedelta(hours=1)
    )
    started("reviewed", alice, now - timedelta(days=3))
    append_event("reviewed", REVIEW, {}, user=alice, now=now - timedelta(days=2))
    return now


def test_the_strip_lists_the_overdue_longest_overdue_first(histories):
    rows = board_model.board_rows(None, None, histories - timedelta(days=1))
    found = board_model.needing_attention(rows, histories, session_views.thresholds())
    assert [(session_id, reason.kind) for session_id, reason in found] == [
        ("reviewed", "review_long"),  # 2 d in review: 1 d past its 1 d
        ("stuck", "blocked_long"),  # 10 h blocked: 6 h past its 4 h
        ("quiet", "stale"),  # 2 h quiet: 1 h 30 min past its 30 min
    ]


def test_the_strip_agrees_with_each_session_s_own_attention(histories):
    rows = board_model.board_rows(None, None, histories - timedelta(days=1))
    found = dict(board_model.needing_attention(rows, histories, session_views.thresholds()))
    views = session_views.session_views(["fresh", "quiet", "stuck", "reviewed"], histories)
    assert found == {i: v.attention for i, v in views.items() if v.attention is not None}
    assert found["stuck"].since == histories - timedelta(hours=10)


def test_the_board_leads_with_needs_attention(alice_client, histories):
    page = alice_client.get("/").content.decode()
    strip = page[page.index('class="attention"') : page.index('class="column')]
    assert "stuck" in strip and "blocked 10 h" in strip and "waiting on vendor" not in strip
    assert "and on legal" in strip
    assert "fresh" not in strip
    assert strip.index("reviewed") < strip.index("stuck") < strip.index("quiet")


def test_a_strip_line_follows_its_session_s_new_events(alice_client, alice, histories):
    def strip():
        page = alice_client.get("/").content.decode()
        return page[page.index('class="attention"') : page.index('class="column')]

    assert "and on legal" in strip()
    append_event("stuck", BLOCK, {"reason": "and on the printer"}, user=alice)
    assert "and on the printer" in strip() and "and on legal" not in strip()


# The board and a plan as of a moment


@pytest.fixture
def v2(db):
    from tests.support.cases import V2
    from tests.support.logs import import_logs

    assert import_logs(V2 / "logs") == (None, "")


def test_the_board_as_of_a_moment_shows_each_session_as_it_was_then(alice_client, v2):
    from tests.support.cases import v2_expected

    snapshot = v2_expected()["as_of"][0]
    page = alice_client.get(f"/?at={snapshot['at']}").content.decode()
    assert "The board as it was at" in page and "UTC</time>: read-only." in page
    for session_id, want in snapshot["sessions"].items():
        assert f'class="card status-{want["status"]}" id="card-{session_id}"' in page
    assert 'id="card-quiet"' not in page  # started later
    assert 'action="/sessions/' not in page  # read-only: no actions


def test_a_plan_as_of_a_moment_shows_its_nodes_as_they_were(alice_client, v2):
    page = alice_client.get("/plans/fanout/?at=2026-11-28T09:15:00Z").content.decode()
    assert "The plan as it was at" in page
    assert 'data-node="b" data-state="failed"' in page
    assert 'data-node="d" data-state="upstream_failed"' in page
    assert "/start/" not in page


def test_a_moment_that_cannot_be_read_is_a_400(alice_client):
    assert alice_client.get("/?at=yesterday").status_code == 400


@pytest.mark.parametrize("at", ["0001-01-01T00:00:00%2B01:00", "9999-12-31T23:59:59"])
def test_a_moment_at_the_ends_of_the_calendar_is_a_400_on_the_pages(alice_client, at):
    for path in ("/", "/plans/any/"):
        answer = alice_client.get(f"{path}?at={at}")
        assert answer.status_code == 400
        assert "years 2 to 9998" in answer.content.decode()


def test_a_blocked_run_starts_at_the_first_block_after_the_last_unblock(alice):
    now = timezone.now()
    started("again", alice, now - timedelta(hours=20))
    for kind, hours in ((BLOCK, 19), (UNBLOCK, 18), (BLOCK, 9), (BLOCK, 2)):
        fields = {"reason": "waiting"} if kind == BLOCK else {}
        append_event("again", kind, fields, user=alice, now=now - timedelta(hours=hours))
    started("never-blocked", alice, now - timedelta(hours=1))
    assert store.blocked_run_starts(["again", "never-blocked", "missing"]) == {
        "again": now - timedelta(hours=9)
    }


@pytest.fixture
def blocked_again(alice):
    """A session blocked 19 h ago, unblocked 9 h ago and blocked again 2 h ago; the
    moment between (10 h ago) and now."""
    now = timezone.now()
    started("again", alice, now - timedelta(hours=20))
    for kind, hours in ((BLOCK, 19), (UNBLOCK, 9), (BLOCK, 2)):
        fields = {"reason": "waiting"} if kind == BLOCK else {}
        append_event("again", kind, fields, user=alice, now=now - timedelta(hours=hours))
    return now - timedelta(hours=10), now


def test_a_blocked_run_as_of_a_moment_ignores_blocks_and_unblocks_after_it(blocked_again):
    at, now = blocked_again
    assert store.blocked_run_starts(["again"], at) == {"again": now - timedelta(hours=19)}


def test_the_strip_as_of_a_moment_counts_a_blocked_run_from_its_start_then(blocked_again):
    at, now = blocked_again
    rows = board_model.board_rows(None, None, at - timedelta(days=1), at)
    (found,) = board_model.needing_attention(rows, at, session_views.thresholds(), at)
    assert found[0] == "again" and found[1].since == now - timedelta(hours=19)
