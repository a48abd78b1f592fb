"""Every page at a phone's width (390 px) and a laptop's (1,280 px): nothing scrolls
sideways, with the demo's sessions and plans loaded (long titles, the 15-node plan)."""

import pytest
from playwright.sync_api import expect

from sessions.rules.tokens import create_token
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
    """The board at 390 px, for the README: the navigation folded behind Menu, the cards
    in one column."""
    import_demo_moved_to_now(verbosity=0)
    page = page_as(alice, "/", width=390)
    expect(page.get_by_role("button", name="Menu")).to_be_visible()
    assert sideways(page) == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "board-phone.png"), full_page=False)


def on_screen(locator, width):
    box = locator.bounding_box()
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width


NAVIGATION = ["Board", "Plans", "Metrics", "API", "Tokens", "Webhooks"]


def test_at_a_phones_width_every_navigation_item_is_one_tap_away(page_as, alice):
    page = page_as(alice, "/", width=390)
    menu = page.get_by_role("button", name="Menu")
    expect(page.get_by_role("link", name="Webhooks")).to_be_hidden()
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    for name in NAVIGATION:
        assert on_screen(page.locator("#site-nav").get_by_role("link", name=name), 390), name
    assert on_screen(page.get_by_role("button", name="Sign out"), 390)
    assert sideways(page) == 0
    page.get_by_role("link", name="Webhooks").click()
    expect(page).to_have_title("Webhooks · Control Tower")


def test_without_javascript_the_navigation_wraps_on_screen(page_as, alice):
    page = page_as(alice, "/", width=390, javascript=False)
    for name in NAVIGATION:
        assert on_screen(page.locator("#site-nav").get_by_role("link", name=name), 390), name
    assert on_screen(page.get_by_role("button", name="Sign out"), 390)


def test_at_a_laptops_width_the_navigation_shows_without_a_menu(page_as, alice):
    page = page_as(alice, "/", width=1280)
    expect(page.get_by_role("button", name="Menu")).to_be_hidden()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def test_the_tokens_page_with_a_token_does_not_scroll_sideways(page_as, alice):
    create_token(alice, "claude-on-a-laptop-with-a-long-name")
    page = page_as(alice, "/tokens/", width=390)
    assert sideways(page) == 0


def test_each_token_radio_sits_before_its_label_on_its_line(page_as, alice):
    page = page_as(alice, "/tokens/", width=390)
    for label in ("read and write", "read only"):
        radio = page.get_by_label(label, exact=True).bounding_box()
        text = page.locator("label", has_text=label).bounding_box()
        assert radio["x"] + radio["width"] <= text["x"], label
        radio_middle, text_middle = (b["y"] + b["height"] / 2 for b in (radio, text))
        assert abs(radio_middle - text_middle) <= 4, label
