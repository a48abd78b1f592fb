"""Every page at a phone's width (390 px) and a laptop's (1,280 px): nothing scrolls
sideways, with the demo's sessions and plans loaded (long titles, the 15-node plan)."""

import pytest

from tests.browser.conftest import ARTIFACTS, DEMO_PAGES
from tests.support.logs import DEMO, import_demo_moved_to_now, import_logs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def sideways(page) -> int:
    """How far the page scrolls sideways, in pixels (0: not at all)."""
    return page.evaluate(
        "() => document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth"
    )


@pytest.mark.parametrize("width", [390, 1280])
def test_no_page_scrolls_sideways(page_as, alice, width):
    assert import_logs(DEMO) == (None, "")
    overflowing = {}
    for path in DEMO_PAGES:
        page = page_as(alice, path, width=width)
        if sideways(page) > 0:
            overflowing[path] = sideways(page)
        page.context.close()
    assert overflowing == {}


@pytest.mark.parametrize("width", [390, 1280])
def test_the_sign_in_page_does_not_scroll_sideways(anonymous_page, live_server, width):
    anonymous_page.set_viewport_size({"width": width, "height": 900})
    anonymous_page.goto(live_server.url + "/accounts/login/")
    assert sideways(anonymous_page) == 0


def test_the_board_at_a_phone_s_width(page_as, alice):
    """The board at 390 px, for the README: the navigation on one line of its own, which
    scrolls within itself rather than wrapping; the cards in one column."""
    import_demo_moved_to_now(verbosity=0)
    page = page_as(alice, "/", width=390)
    nav = page.locator(".topbar nav")
    links = nav.get_by_role("link")
    tops = {round(box["y"]) for box in (links.nth(i).bounding_box() for i in range(links.count()))}
    assert len(tops) == 1, "the navigation wraps"
    assert sideways(page) == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "board-phone.png"), full_page=False)
