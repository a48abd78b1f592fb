"""The board's Needs attention strip: who needs a person now, longest overdue first, with
the reason and how long; the same rule as the API's `attention`."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions import reading
from sessions.append import append_event
from sessions.vocabulary import BLOCK, REVIEW, START

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
    rows = reading.board_rows(None, None, histories - timedelta(days=1))
    found = reading.needing_attention(rows, histories, reading.thresholds())
    assert [(session_id, reason.kind) for session_id, reason in found] == [
        ("reviewed", "review_long"),  # 2 d in review: 1 d past its 1 d
        ("stuck", "blocked_long"),  # 10 h blocked: 6 h past its 4 h
        ("quiet", "stale"),  # 2 h quiet: 1 h 30 min past its 30 min
    ]


def test_the_strip_agrees_with_each_session_s_own_attention(histories):
    rows = reading.board_rows(None, None, histories - timedelta(days=1))
    found = dict(reading.needing_attention(rows, histories, reading.thresholds()))
    views = reading.session_views(["fresh", "quiet", "stuck", "reviewed"], histories)
    assert found == {i: v.attention for i, v in views.items() if v.attention is not None}
    assert found["stuck"].since == histories - timedelta(hours=10)


def test_the_board_leads_with_needs_attention(alice_client, histories):
    page = alice_client.get("/").content.decode()
    strip = page[page.index('class="attention"') : page.index('class="column')]
    assert "stuck" in strip and "blocked 10 h" in strip and "waiting on vendor" not in strip
    assert "and on legal" in strip
    assert "fresh" not in strip
    assert strip.index("reviewed") < strip.index("stuck") < strip.index("quiet")
