"""What happened, readable (issue 55): a closed session's card shows no blocker as open,
its page says what it was blocked on when it closed, and the timeline says what a work
or usage report holds."""

import pytest
from playwright.sync_api import expect

from sessions.domain.vocabulary import BLOCK, CLOSE, START, USAGE, WORK
from sessions.rules.append import append_event
from tests.browser.conftest import column

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

COMMIT = "ef1d19" + "0" * 34


@pytest.fixture
def paused_then_closed(alice):
    append_event("ledger", START, {"title": "Migrate the ledger"}, user=alice)
    reason = "budget spent: $1.00 of $1.00 (node a)"
    append_event("ledger", BLOCK, {"reason": reason}, user=alice)
    append_event("ledger", CLOSE, {"outcome": "abandoned", "note": "out of budget"}, user=alice)


def test_a_closed_card_shows_no_open_blocker(page_as, alice, paused_then_closed):
    board = page_as(alice, "/")
    closed = column(board, "closed")
    closed.locator("summary").first.click()
    card = closed.locator(".card", has_text="Migrate the ledger")
    expect(card).to_be_visible()
    expect(card.locator(".blockers")).to_have_count(0)


def test_a_closed_sessions_page_says_what_it_was_blocked_on(page_as, alice, paused_then_closed):
    page = page_as(alice, "/sessions/ledger/")
    blocked = page.get_by_role("list", name="Blocked on when it closed")
    expect(blocked).to_contain_text("budget spent: $1.00 of $1.00 (node a)")
    expect(page.get_by_role("list", name="Open blockers")).to_have_count(0)


def test_the_timeline_says_what_work_and_usage_reports_hold(page_as, alice):
    append_event("fix", START, {"title": "Fix the login"}, user=alice)
    append_event("fix", WORK, {"pr": 94, "pr_state": "open", "branch": "fix-login"}, user=alice)
    checked = {"check": "linter", "check_state": "success", "commit": COMMIT}
    append_event("fix", WORK, checked, user=alice)
    spent = {"model": "opus-5-5", "input_tokens": 40, "output_tokens": 20}
    append_event(
        "fix", USAGE, {**spent, "cache_read_tokens": 0, "cache_write_tokens": 0}, user=alice
    )
    rows = page_as(alice, "/sessions/fix/").locator("table.timeline tbody tr")
    expect(rows.nth(1)).to_contain_text("PR #94 opened, on fix-login")
    expect(rows.nth(2)).to_contain_text("checks: linter ✓ at ef1d19000000…")
    expect(rows.nth(3)).to_contain_text("opus-5-5: 40 in, 20 out")
