"""Playwright (sync API) driving the system Chromium against pytest-django's live server.

Run as its own pytest invocation with DJANGO_ALLOW_ASYNC_UNSAFE=true (`make test-browser`).
"""

import os
import re
from pathlib import Path

import pytest
from django.test import Client
from playwright.sync_api import expect, sync_playwright

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# Every page a signed-in person sees, as the demo logs fill them (tests/test_jsonl.DEMO):
# checked at a phone's width and by axe-core.
DEMO_PAGES = [
    "/",
    "/sessions/pay-webhooks-1/",
    "/plans/",
    "/plans/payments-v2/",
    "/metrics/",
    "/tokens/",
    "/webhooks/",
    "/plans/no-such-plan/",  # the page of a 404
]
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

expect.set_options(timeout=10_000)


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        message = f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + "; browser tests are required under CI=true.")
        pytest.skip(message + "; browser tests skipped.")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield browser
        browser.close()


@pytest.fixture(autouse=True)
def fast_polling(settings):
    settings.POLL_SECONDS = 1


@pytest.fixture
def policy_violations():
    """What Chromium reported against the pages' Content-Security-Policy: every browser
    test fails if anything was (a script, a style or a request the policy refused)."""
    found = []
    yield found
    assert not found, f"Content-Security-Policy violations: {found}"


# Every refusal the policy makes is a `securitypolicyviolation` event, whatever Chromium
# prints for it (its console wording changes between versions): each is said on the
# console in words the listener below knows.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  console.error("Content Security Policy violation: " + event.violatedDirective + " "
    + (event.blockedURI || "") + " " + (event.sample || ""));
});
"""


def watched(page, violations):
    def on_console(message):
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            violations.append(message.text)

    page.add_init_script(REPORT_VIOLATIONS)
    page.on("console", on_console)
    return page


@pytest.fixture
def page_as(browser, live_server, policy_violations):
    """A browser page signed in as the given user (no login form needed)."""
    contexts = []

    def open_page(user, path="/", width=1400, javascript=True):
        client = Client()
        client.force_login(user)
        context = browser.new_context(
            viewport={"width": width, "height": 900}, java_script_enabled=javascript
        )
        context.add_cookies(
            [
                {
                    "name": "sessionid",
                    "value": client.cookies["sessionid"].value,
                    "url": live_server.url,
                }
            ]
        )
        contexts.append(context)
        page = watched(context.new_page(), policy_violations)
        page.goto(live_server.url + path)
        return page

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def anonymous_page(browser, live_server, policy_violations):
    context = browser.new_context()
    yield watched(context.new_page(), policy_violations)
    context.close()


def card(page, title):
    return page.locator(".card", has_text=title)


def column(page, status):
    return page.locator(f".column.status-{status}")


def open_action(page, title, button):
    """Unfold one action of a card; returns that action's part of the card."""
    summary = page.locator("summary", has_text=re.compile(f"^{button}$"))
    action = card(page, title).locator("details.act").filter(has=summary)
    action.locator("summary").click()
    return action


def act_on_card(page, title, button, **fields):
    """Open an action on a card, fill its fields by label, press its button."""
    action = open_action(page, title, button)
    for label, value in fields.items():
        action.get_by_label(label).fill(value)
    action.locator("button[type=submit]").click()
