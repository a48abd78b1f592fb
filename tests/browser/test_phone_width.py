"""Every page at a phone's width (390 px) and a laptop's (1,280 px): nothing scrolls
sideways, with the demo's sessions and plans loaded (long titles, the 15-node plan)."""

import pytest

from tests.browser.conftest import DEMO_PAGES
from tests.test_jsonl import DEMO, import_logs

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
