"""axe-core (pinned in tests/agents, served from node_modules, never a CDN) finds no
violation of any impact on any page, with the demo's sessions and plans loaded."""

import os
from pathlib import Path

import pytest
from django.test import Client

from tests.browser.conftest import DEMO_PAGES
from tests.support.logs import DEMO, import_logs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parents[1] / "agents" / "node_modules" / "axe-core" / "axe.min.js"


@pytest.fixture
def axe():
    if not AXE.exists():
        message = f"axe-core is missing at {AXE} (make agents)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + "; required under CI=true.")
        pytest.skip(message)
    return AXE.read_text()


def violations(page, axe):
    # Injected through the browser's protocol: the pages' policy allows no other script.
    page.evaluate(axe)
    return page.evaluate(
        "async () => (await axe.run()).violations"
        ".map(v => `${v.id} (${v.impact}): ${v.nodes.map(n => n.target).join(', ')}`)"
    )


@pytest.fixture
def context(browser, live_server, alice):
    client = Client()
    client.force_login(alice)
    # The policy would refuse axe's own script; it is tested on its own elsewhere.
    made = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    cookie = {
        "name": "sessionid",
        "value": client.cookies["sessionid"].value,
        "url": live_server.url,
    }
    made.add_cookies([cookie])
    yield made
    made.close()


@pytest.mark.parametrize("path", DEMO_PAGES)
def test_a_page_has_no_accessibility_violation(context, live_server, axe, path):
    assert import_logs(DEMO) == (None, "")
    page = context.new_page()
    page.goto(live_server.url + path)
    assert violations(page, axe) == []


def test_the_sign_in_page_has_no_accessibility_violation(browser, live_server, axe):
    made = browser.new_context(bypass_csp=True)
    page = made.new_page()
    page.goto(live_server.url + "/accounts/login/")
    assert violations(page, axe) == []
    made.close()
