"""The Content-Security-Policy with Chromium: every page of the browser suite runs under
it with nothing refused (conftest's `policy_violations`); here, the pages the rest of the
suite does not open, and proof that the watch catches a refused script."""

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_api_reference_works_under_the_policy(page_as, alice):
    page = page_as(alice, "/api/")
    expect(page.locator(".opblock-summary-path").first).to_be_visible()
    expect(page.get_by_text("/api/sessions/{session_id}/events").first).to_be_visible()


def test_an_injected_inline_script_is_refused_and_reported(page_as, alice, policy_violations):
    page = page_as(alice)
    page.evaluate(
        "() => { const s = document.createElement('script');"
        " s.textContent = 'window.injected = true'; document.body.append(s); }"
    )
    page.wait_for_timeout(200)
    assert page.evaluate("() => window.injected") is None
    assert any("script-src 'self'" in text for text in policy_violations)
    policy_violations.clear()  # seen: this test's point


def test_every_answer_carries_the_policy_headers(page_as, alice):
    page = page_as(alice)
    answer = page.request.get(page.url)
    headers = answer.headers
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "same-origin"
    assert "camera=()" in headers["permissions-policy"]
