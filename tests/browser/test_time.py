"""Time and attention in a real browser: the Needs attention strip, time in each status
on the session page, and the metrics charts (drawn, readable as tables, no console
errors)."""

from datetime import UTC, timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from sessions.domain.vocabulary import BLOCK, START
from sessions.rules.append import append_event
from sessions.store import visits
from tests.browser.conftest import ARTIFACTS
from tests.support.cases import V2
from tests.support.logs import import_logs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def stuck(alice):
    now = timezone.now()
    append_event(
        "stuck", START, {"title": "Migrate billing"}, user=alice, now=now - timedelta(hours=9)
    )
    append_event(
        "stuck", BLOCK, {"reason": "waiting on vendor"}, user=alice, now=now - timedelta(hours=6)
    )
    return "stuck"


def test_the_board_leads_with_what_needs_attention(page_as, alice, stuck):
    page = page_as(alice, "/")
    line = page.locator(".attention-lines li", has_text="Migrate billing")
    expect(line).to_contain_text("blocked 6 h — waiting on vendor")
    expect(page.locator(".card", has_text="Migrate billing").locator(".times")).to_contain_text(
        "active 3 h · blocked 6 h"
    )


def test_the_strip_refreshes_when_the_session_is_unblocked(page_as, alice, stuck):
    page = page_as(alice, "/")
    expect(page.locator(".attention-lines li")).to_have_count(1)
    append_event(stuck, "session_unblock", {}, user=alice)
    expect(page.locator(".attention .empty")).to_have_text("Nothing is overdue.")


def test_cards_changed_since_the_last_visit_are_marked(page_as, alice, bob, stuck):
    two_hours_ago = timezone.now() - timedelta(hours=2)
    append_event("quiet", START, {"title": "Quiet work"}, user=bob, now=two_hours_ago)
    visits.look(alice, timezone.now() - timedelta(hours=1))
    append_event(stuck, "session_unblock", {}, user=alice)
    page = page_as(alice, "/")
    expect(page.locator(".card", has_text="Migrate billing").locator(".badge.new")).to_be_visible()
    expect(page.locator(".card", has_text="Quiet work").locator(".badge.new")).to_have_count(0)
    expect(page.locator(".since-last-looked")).to_contain_text("1 session marked new changed")
    append_event("quiet", BLOCK, {"reason": "waiting"}, user=bob)  # seen by the next poll
    expect(page.locator(".card", has_text="Quiet work").locator(".badge.new")).to_be_visible()


def test_the_session_page_shows_a_bar_of_time_per_status_and_durations(page_as, alice, stuck):
    page = page_as(alice, f"/sessions/{stuck}/")
    expect(page.locator(".time-bar rect")).to_have_count(2)
    expect(page.locator(".time-bar")).to_have_attribute("aria-label", "active 3 h, blocked 6 h")
    expect(page.locator(".timeline tbody tr").first.locator(".lasted")).to_have_text("3 h")


def test_the_metrics_charts_render_without_console_errors(page_as, alice):
    assert import_logs(V2 / "logs") == (None, "")
    errors = []
    page = page_as(alice, "/")
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    page.goto(page.url.rstrip("/") + "/metrics/?since=2026-11-28&until=2026-11-29")
    expect(page.locator("svg.plot")).to_have_count(4)  # no spend: no chart per owner
    expect(page.locator("svg.plot polygon.area")).to_have_count(4)
    expect(page.locator("#throughput-table tbody tr")).to_have_count(2)
    assert page.locator("svg.plot rect.bar").count() > 5
    assert errors == []
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "metrics.png"), full_page=True)


def test_a_bad_window_is_re_shown_with_its_error(page_as, alice):
    page = page_as(alice, "/metrics/")
    page.get_by_label("From").fill("2026-11-29")
    page.get_by_label("To").fill("2026-11-01")
    page.get_by_role("button", name="Show").click()
    expect(page.locator(".error")).to_contain_text("From must not be after To")


def test_the_board_as_of_a_moment_is_read_only_and_shareable(page_as, alice, stuck):
    page = page_as(alice, "/")
    moment = (timezone.now() - timedelta(hours=7)).strftime("%Y-%m-%dT%H:%M:%S")
    page.get_by_label("As of (UTC)").fill(moment)
    page.get_by_role("button", name="Show the board then").click()
    expect(page.locator(".as-of-banner")).to_contain_text("read-only")
    assert "at=" in page.url
    card = page.locator(".card", has_text="Migrate billing")
    expect(card).to_have_class("card status-active")  # not blocked yet, seven hours ago
    expect(card.locator("details.act")).to_have_count(0)
    page.get_by_role("link", name="Back to now").click()
    expect(page.locator(".card", has_text="Migrate billing")).to_have_class("card status-blocked")


def test_the_metrics_window_reads_as_dates_from_the_first_day_with_data(page_as, alice, stuck):
    # The tower's first event is 9 hours old: the default window starts on its day,
    # not 13 empty days before it.
    first = (timezone.now() - timedelta(hours=9)).astimezone(UTC).date()
    page = page_as(alice, "/metrics/")
    window = page.locator("p.meta").first
    expect(window).to_contain_text(f"From {first.day} {first:%B %Y} to")
    expect(window).not_to_contain_text("T00:00:00")
    expect(page.get_by_label("From")).to_have_value(first.isoformat())


def test_every_key_of_every_metrics_legend_has_its_colour(page_as, alice):
    page = page_as(alice, "/metrics/")
    keys = page.locator(".legend .key")
    expect(keys.first).to_be_visible()
    colours = keys.evaluate_all(
        "keys => keys.map(k => [k.className, getComputedStyle(k).backgroundColor])"
    )
    assert {name for name, _ in colours} >= {"key outcome-lapsed"}
    transparent = [
        name for name, colour in colours if colour in ("rgba(0, 0, 0, 0)", "transparent")
    ]
    assert transparent == []
