"""Liveness in a real browser: a lapsed node drawn apart and reclaimed by one of two
people (the other sees why not), released by the plan's owner, and a session's latest
progress and waiting messages on its card, with the Message form for the plan's owner."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from sessions.domain.vocabulary import CLOSE, PLAN_CREATE, PROGRESS, START, WORK
from sessions.models import Event
from sessions.rules.append import append_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NODES = [{"key": "schema", "title": "Migrate the schema"}, {"key": "docs", "title": "Docs"}]


@pytest.fixture
def lapsed(alice, make_user, settings):
    """Alice's plan (lease 30 minutes); carol's session on its node schema went silent two
    hours ago, saying what it was doing."""
    settings.POLL_SECONDS = 600  # the pages stay as loaded while the test clicks
    then = timezone.now() - timedelta(hours=2)
    fields = {"title": "Release", "nodes": NODES, "lease": 30, "max_attempts": 3}
    append_event("rel", PLAN_CREATE, fields, user=alice, now=then)
    carol = make_user("carol")
    append_event("carol-1", START, {"plan": "rel", "node": "schema"}, user=carol, now=then)
    append_event("carol-1", PROGRESS, {"note": "moved the users table"}, user=carol, now=then)
    return "carol-1"


def test_two_people_reclaim_one_lapsed_node_one_wins_the_other_sees_why(
    page_as, alice, bob, lapsed
):
    first, second = page_as(alice, "/plans/rel/"), page_as(bob, "/plans/rel/")
    expect(first.locator("g.node[data-node='schema']")).to_have_attribute("data-state", "lapsed")
    expect(first.locator(".legend .state-lapsed")).to_be_visible()
    first.get_by_role("button", name="Reclaim Migrate the schema").click()
    expect(first.locator(".message")).to_contain_text("Started 'schema'")
    second.get_by_role("button", name="Reclaim Migrate the schema").click()
    expect(second.locator(".message")).to_contain_text("Not started")
    expect(second.locator(".message")).to_contain_text("already working on it")
    close = Event.objects.get(session=lapsed, type=CLOSE)
    assert (close.outcome, close.actor) == ("lapsed", "alice")
    expect(first.locator("table.attempts tr[data-node='schema']")).to_contain_text(
        "moved the users table"
    )


def test_a_nodes_last_attempt_shows_the_branch_and_pull_request_it_left(page_as, alice, lapsed):
    carol = Event.objects.get(session=lapsed, seq=1).actor
    worker = type(alice).objects.get(username=carol)
    fields = {"repo": "acme/shop", "branch": "move-users", "pr": 31, "pr_state": "open"}
    append_event(lapsed, WORK, fields, user=worker)
    append_event(lapsed, CLOSE, {"outcome": "failed"}, user=worker)
    handoff = page_as(alice, "/plans/rel/").locator("table.attempts tr[data-node='schema']")
    expect(handoff.locator(".work .branch")).to_have_text("move-users")
    expect(handoff.locator(".work .pr")).to_have_text("PR #31")


def test_the_plans_owner_releases_a_lapsed_node(page_as, alice, lapsed):
    page = page_as(alice, "/plans/rel/")
    page.get_by_role("button", name="Release Migrate the schema").click()
    expect(page.locator(".message")).to_contain_text("Released 'schema'")
    expect(page.locator("g.node[data-node='schema']")).to_have_attribute("data-state", "ready")


def test_a_lapsed_card_shows_its_progress_and_takes_a_message_from_the_plans_owner(
    page_as, alice, lapsed
):
    page = page_as(alice, "/")
    card = page.locator(f"#card-{lapsed}")
    expect(card.locator(".badge.lapsed")).to_be_visible()
    expect(card.locator(".progress")).to_contain_text("moved the users table")
    card.locator("summary", has_text="Message").click()
    card.get_by_label("Message to the worker").fill("Stop: the API changed")
    card.locator("form").get_by_role("button", name="Send the message").click()
    card = page.locator(f"#card-{lapsed}")
    expect(card.locator(".messages")).to_contain_text("Stop: the API changed")
    expect(card.locator(".messages")).to_contain_text("1 message waiting")
    assert Event.objects.filter(session=lapsed, type="session_message", actor="alice").exists()
