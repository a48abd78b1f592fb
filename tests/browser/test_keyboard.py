"""Keyboard only (issue 25): start a session, block it, unblock it with the answer and
close it, with Tab, Enter and typing alone; the focus stays where the hand is."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import card, column

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def tab_to(page, name, most=60):
    """Press Tab until the focused element's accessible text is `name`."""
    for _ in range(most):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "() => (document.activeElement.innerText || document.activeElement.value || '').trim()"
        )
        if focused == name:
            return
    raise AssertionError(f"no {name!r} within {most} Tabs")


def act(page, summary, text, submit):
    tab_to(page, summary)
    page.keyboard.press("Enter")  # unfolds the action
    page.keyboard.press("Tab")  # its field
    page.keyboard.type(text)
    tab_to(page, submit)
    page.keyboard.press("Enter")


def test_start_block_unblock_and_close_with_the_keyboard_alone(page_as, alice):
    page = page_as(alice)
    tab_to(page, "Start a session")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    page.keyboard.type("Keyboard only")
    tab_to(page, "Start session")
    page.keyboard.press("Enter")
    session = card(column(page, "active"), "Keyboard only")
    expect(session).to_be_visible()
    page.locator("main").focus()
    act(page, "Block", "which database?", "Block the session")
    expect(card(column(page, "blocked"), "Keyboard only")).to_be_focused()
    act(page, "Unblock", "PostgreSQL", "Unblock the session")
    active = card(column(page, "active"), "Keyboard only")
    expect(active).to_be_focused()
    expect(active.locator(".next")).to_contain_text("PostgreSQL")
    act(page, "Close", "done", "Close the session")
    expect(column(page, "active").locator(".card")).to_have_count(0)
