"""Spend, as people see it: a card's cost (its tokens on hover), and the session page's
usage by model with the share read from the cache."""

import pytest
from playwright.sync_api import expect

from sessions.domain.vocabulary import CLOSE, PLAN_CREATE, START, USAGE
from sessions.rules.append import append_event
from tests.browser.conftest import card

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def spending(alice):
    """A session that spent $18.60 on a priced model, and something on an unpriced one."""
    append_event("s1", START, {"title": "Fix the login"}, user=alice)
    counts = {"input_tokens": 1_000_000, "output_tokens": 1_000_000}
    counts |= {"cache_read_tokens": 2_000_000, "cache_write_tokens": 0}
    append_event("s1", USAGE, {"model": "claude-sonnet-4-5-20250929", **counts}, user=alice)
    append_event("s1", USAGE, {"model": "their-model", **counts}, user=alice)
    return "Fix the login"


@pytest.mark.parametrize("width", [390, 1280])
def test_a_card_shows_what_its_session_spent(page_as, alice, spending, width):
    page = page_as(alice, "/", width=width)
    spent = card(page, spending).locator(".spend")
    expect(spent).to_have_text("$18.60 + unpriced")
    expect(spent).to_have_attribute(
        "title",
        "tokens: 2,000,000 input, 2,000,000 output, 4,000,000 cache read, 0 cache write;"
        " not priced: their-model",
    )


def test_the_session_page_lists_the_usage_by_model(page_as, alice, spending):
    page = page_as(alice, "/sessions/s1/")
    table = page.locator("table.usage")
    expect(table.locator("caption")).to_have_text("$18.60 and models not priced, by model")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("claude-sonnet-4-5-20250929")
    expect(rows.first).to_contain_text("67%")  # 2M of 3M input-side tokens from the cache
    expect(rows.first).to_contain_text("$18.60")
    expect(rows.last).to_contain_text("not priced")


def test_a_plan_page_shows_what_the_plan_and_each_node_spent(page_as, alice):
    nodes = [{"key": "a", "title": "Migrate"}, {"key": "b", "title": "Docs"}]
    append_event("rel", PLAN_CREATE, {"title": "Release", "nodes": nodes}, user=alice)
    append_event("a1", START, {"title": "a1", "plan": "rel", "node": "a"}, user=alice)
    counts = {"input_tokens": 0, "output_tokens": 1_000_000, "cache_read_tokens": 0}
    counts["cache_write_tokens"] = 0
    append_event("a1", USAGE, {"model": "claude-sonnet-4-5", **counts}, user=alice)
    page = page_as(alice, "/plans/rel/")
    expect(page.locator(".spend-total")).to_have_text("$15.00 over every attempt")
    row = page.locator("table.spend tr[data-node='a']")
    expect(row).to_contain_text("$15.00")
    expect(row.locator("meter")).to_have_attribute("value", "15.000000")
    expect(page.locator("table.spend tr[data-node='b']")).to_have_count(0)


def test_the_metrics_page_charts_spend_per_day_and_per_owner(page_as, alice, spending):
    page = page_as(alice, "/metrics/")
    bars = page.locator("section[aria-labelledby='spend-head'] rect.bar")
    expect(bars).to_have_count(1)
    expect(bars.locator("title")).to_contain_text(": $18.60")
    owners = page.locator("#owners-table tbody tr")
    expect(owners).to_have_count(1)
    expect(owners).to_contain_text("alice")
    expect(owners).to_contain_text("$18.60")
    expect(page.locator("section[aria-labelledby='owners-head'] svg.plot")).to_be_visible()


def test_the_metrics_page_charts_spend_per_agent(page_as, alice, spending):
    append_event("cx1", START, {"title": "Codex's", "agent": "codex 0.169.0"}, user=alice)
    counts = {"input_tokens": 0, "output_tokens": 1_000_000, "cache_read_tokens": 0}
    counts["cache_write_tokens"] = 0
    append_event("cx1", USAGE, {"model": "claude-sonnet-4-5", **counts}, user=alice)
    page = page_as(alice, "/metrics/")
    agents = page.locator("#agents-table tbody tr")
    expect(agents).to_have_count(2)
    expect(agents.first).to_contain_text("Codex")
    expect(agents.first).to_contain_text("$15.00")
    expect(agents.last).to_contain_text("unnamed")  # the person's own session: $18.60
    expect(page.locator("section[aria-labelledby='agents-head'] svg.plot")).to_be_visible()


def test_the_metrics_page_counts_the_sessions_closed_per_agent(page_as, alice):
    append_event("cx1", START, {"title": "Codex's", "agent": "codex 0.169.0"}, user=alice)
    append_event("cx1", CLOSE, {"outcome": "failed", "note": "red"}, user=alice)
    page = page_as(alice, "/metrics/")
    row = page.locator("#agents-throughput-table tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator("th")).to_have_text("Codex")
    expect(row).to_contain_text("1")
