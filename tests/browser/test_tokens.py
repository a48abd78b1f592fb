"""Tokens, self-service, in a real browser: make one named for an agent, copy it once,
use it over HTTP, revoke it."""

import pytest
from playwright.sync_api import expect

from tests.support.http import http_request

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_person_makes_a_token_uses_it_and_revokes_it(page_as, alice, live_server):
    page = page_as(alice, "/tokens/")
    expect(page.locator(".empty")).to_have_text("No tokens yet.")
    page.get_by_label("Name").fill("claude-on-laptop")
    page.get_by_role("button", name="Make a token").click()
    expect(page.locator(".new-token")).to_contain_text("shown only once")
    token = page.locator("#new-token").inner_text()
    expect(page.locator("#mcp-config")).to_contain_text(f'"Authorization": "Bearer {token}"')
    row = page.locator(".token-row", has_text="claude-on-laptop")
    expect(row).to_contain_text("never")
    assert http_request(live_server.url, "GET", "/api/sessions", token=token).status == 200
    page.reload()  # not shown again, and now used
    expect(page.locator("#new-token")).to_have_count(0)
    expect(row.locator("td").nth(5)).not_to_have_text("never")  # last used
    row.get_by_role("button", name="Revoke claude-on-laptop").click()
    expect(row).to_contain_text("revoked")
    assert http_request(live_server.url, "GET", "/api/sessions", token=token).status == 401


def test_a_nameless_token_is_refused_on_the_page(page_as, alice):
    page = page_as(alice, "/tokens/")
    page.get_by_label("Name").fill(" ")
    page.locator("#id_name").evaluate("input => input.removeAttribute('required')")
    page.get_by_role("button", name="Make a token").click()
    expect(page.locator(".token-form .error")).to_have_text("This field is required.")


def test_the_copy_button_copies_the_new_token(page_as, alice):
    page = page_as(alice, "/tokens/")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.get_by_label("Name").fill("ci")
    page.get_by_role("button", name="Make a token").click()
    page.get_by_role("button", name="Copy", exact=True).click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert (
        page.evaluate("navigator.clipboard.readText()") == page.locator("#new-token").inner_text()
    )


def test_the_new_tokens_snippet_names_what_ct_reads(page_as, alice, live_server):
    page = page_as(alice, "/tokens/")
    page.get_by_label("Name").fill("ci")
    page.get_by_role("button", name="Make a token").click()
    token = page.locator("#new-token").inner_text()
    snippet = page.locator("#token-env").inner_text()
    assert f"export CT_URL={live_server.url}\n" in snippet
    assert f"export CT_TOKEN={token}\n" in snippet
    assert "TOWER_API" not in page.content()
