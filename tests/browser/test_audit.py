"""The audit trail in a real browser: Control Tower's own, with the way back to the board,
and every note read whole."""

import pytest
from playwright.sync_api import expect

from sessions.domain.vocabulary import BLOCK, START
from sessions.rules.append import append_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_REASON = (
    "waiting for the vendor to confirm the settlement file format for every region, "
    "and for finance to say which of the three reconciliation rules applies in each case; "
    "until then the ledger entries cannot be matched and the job would write wrong totals"
)


@pytest.fixture
def auditor(make_user):
    return make_user("auditor", is_staff=True, is_superuser=True)


def test_the_audit_is_control_towers_with_a_link_back_to_the_board(page_as, auditor):
    page = page_as(auditor, "/admin/")
    expect(page.locator("#site-name")).to_have_text("Control Tower · audit")
    expect(page.get_by_text("Django administration")).to_have_count(0)
    expect(page).to_have_title("The audit trail, users and tokens | Control Tower audit")
    page.get_by_role("link", name="← Back to the board").click()
    expect(page).to_have_title("Board · Control Tower")


def test_the_audit_shows_each_reason_whole(page_as, auditor, alice):
    append_event("s1", START, {"title": "Reconcile"}, user=alice)
    append_event("s1", BLOCK, {"reason": LONG_REASON}, user=alice)
    page = page_as(auditor, "/admin/tower/event/", width=1280)
    cell = page.locator(".audit-text", has_text="waiting for the vendor")
    expect(cell).to_have_text(LONG_REASON)
    clipped = cell.evaluate("e => e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight")
    assert not clipped
    row = page.locator("#result_list tbody tr", has=cell)
    assert row.evaluate("r => r.getBoundingClientRect().right") <= 1280
