"""Where the work lands, as people see it: a card's branch, its pull request (linked,
with its state) and one checks mark naming each run on hover; the session page's runs."""

import pytest
from playwright.sync_api import expect

from sessions.domain.vocabulary import START, WORK
from sessions.rules.append import append_event
from tests.browser.conftest import card

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HEAD = "3f2c" + "0" * 36
PR_URL = "https://github.com/acme/shop/pull/94"


@pytest.fixture
def on_branch(alice):
    append_event("s1", START, {"title": "Fix the login"}, user=alice)
    append_event(
        "s1", WORK, {"repo": "acme/shop", "branch": "fix-login", "commit": HEAD}, user=alice
    )
    append_event("s1", WORK, {"pr": 94, "pr_url": PR_URL, "pr_state": "open"}, user=alice)
    for name, state in (("ci/test", "failure"), ("lint", "success")):
        append_event("s1", WORK, {"commit": HEAD, "check": name, "check_state": state}, user=alice)
    return "Fix the login"


@pytest.mark.parametrize("width", [390, 1280])
def test_a_card_shows_its_branch_pull_request_and_checks(page_as, alice, on_branch, width):
    page = page_as(alice, "/", width=width)
    work = card(page, on_branch).locator(".work")
    expect(work.locator(".branch")).to_have_text("fix-login")
    expect(work.get_by_role("link", name="PR #94")).to_have_attribute("href", PR_URL)
    expect(work.locator(".badge.pr-open")).to_have_text("open")
    mark = work.locator(".checks")
    expect(mark).to_have_class("checks checks-failure")
    expect(mark).to_have_attribute("title", "ci/test: failure, lint: success")


def test_the_session_page_lists_the_check_runs(page_as, alice, on_branch):
    page = page_as(alice, "/sessions/s1/")
    rows = page.locator("table.check-runs tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("ci/test")
    expect(rows.first).to_contain_text("failure")
    expect(page.locator(".facts", has_text="Head commit")).to_contain_text(HEAD)
