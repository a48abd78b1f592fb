"""The tower calls you: with "Notify me in this browser" on and the permission granted
in Chromium, a block of one of your sessions becomes one notification, never repeated on
the next poll, and nothing is shown while you are looking at the board."""

import time

import pytest
from playwright.sync_api import expect

from sessions.domain.vocabulary import BLOCK, MESSAGE, START
from sessions.rules.append import append_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Keeps what the page shows as notifications (headless Chromium draws none), and says
# whether the person is looking at the page.
RECORDER = """
window.shown = [];
const Real = window.Notification;
class Recorded extends Real {
  constructor(title, options) { super(title, options); window.shown.push(title); }
}
window.Notification = Recorded;
document.hasFocus = () => window.looking === true;
"""


def shown_soon(page, count, timeout=10.0):
    """What the page has shown once it has shown `count` (polled from here: the page's
    policy allows no eval, which Playwright's wait_for_function needs)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = page.evaluate("() => window.shown")
        if len(shown) >= count:
            return shown
        page.wait_for_timeout(100)
    return page.evaluate("() => window.shown")


@pytest.fixture
def board(page_as, alice):
    append_event("s1", START, {"title": "Ship the export"}, user=alice)

    def open_board(looking):
        page = page_as(alice)
        page.context.grant_permissions(["notifications"])
        page.add_init_script(RECORDER + f"window.looking = {str(looking).lower()};")
        page.reload()
        page.get_by_role("button", name="Notify me in this browser").click()
        expect(page.get_by_role("button", name="Notifications on (turn off)")).to_be_visible()
        return page

    return open_board


def test_a_block_of_ones_session_is_notified_once(board, alice, lead):
    page = board(looking=False)
    page.wait_for_timeout(300)  # the first poll found where to start
    append_event("s1", BLOCK, {"reason": "which database?"}, user=alice)
    assert shown_soon(page, 1) == ["Ship the export blocked"]
    append_event("s1", MESSAGE, {"note": "use staging"}, user=lead)
    assert len(shown_soon(page, 2)) == 2
    page.wait_for_timeout(2500)  # more polls: nothing repeated
    assert page.evaluate("() => window.shown") == [
        "Ship the export blocked",
        "Ship the export has a message",
    ]


def test_nothing_is_shown_while_one_looks_at_the_board(board, alice):
    page = board(looking=True)
    page.wait_for_timeout(300)
    append_event("s1", BLOCK, {"reason": "which database?"}, user=alice)
    expect(page.locator(".column.status-blocked .card")).to_have_count(1)
    page.wait_for_timeout(1500)
    assert page.evaluate("() => window.shown") == []
    page.evaluate("() => { window.looking = false; }")
    page.wait_for_timeout(1500)  # looking away later: the block was already seen
    assert page.evaluate("() => window.shown") == []
