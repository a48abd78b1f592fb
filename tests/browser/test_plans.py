"""Plans in a real browser: the list, the drawn plan, starting a node (and losing a race
for one), amending with errors re-shown, live refresh, closing with an outcome."""

import pytest
from playwright.sync_api import expect

from sessions.domain.vocabulary import CLOSE, PLAN_CREATE, START
from sessions.models import Event
from sessions.rules.append import append_event
from tests.support.logs import DEMO, import_logs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NODES = [
    {"key": "schema", "title": "Design the schema"},
    {"key": "api", "title": "API endpoint", "needs": ["schema"]},
    {"key": "ui", "title": "Export button", "needs": ["api"]},
    {"key": "docs", "title": "Write the docs"},
]


@pytest.fixture
def plan(alice):
    append_event("rel", PLAN_CREATE, {"title": "Release 2.4", "nodes": NODES}, user=alice)
    return "rel"


def node(page, key):
    return page.locator(f"g.node[data-node='{key}']")


def test_the_plan_list_shows_progress_and_counts(page_as, alice, plan):
    page = page_as(alice, "/plans/")
    row = page.locator(".plan-row", has_text="Release 2.4")
    expect(row.locator("progress")).to_have_attribute("value", "0")
    expect(row.locator(".state-ready")).to_have_text("ready 2")
    expect(row.locator(".state-waiting")).to_have_text("waiting 2")
    row.get_by_role("link", name="Release 2.4").click()
    expect(page.get_by_role("heading", name="Release 2.4")).to_be_visible()


def test_the_plan_draws_nodes_by_state_and_marks_the_critical_path(page_as, alice, plan):
    page = page_as(alice, "/plans/rel/")
    expect(node(page, "schema")).to_have_attribute("data-state", "ready")
    expect(node(page, "api")).to_have_attribute("data-state", "waiting")
    expect(page.locator("g.node.critical")).to_have_count(3)
    expect(page.locator("path.need")).to_have_count(2)
    expect(page.locator("path.need.critical")).to_have_count(2)


def test_a_person_starts_a_ready_node_and_lands_on_its_session(page_as, alice, plan):
    page = page_as(alice, "/plans/rel/")
    page.locator(".ready li[data-node='schema']").get_by_role("button", name="Start").click()
    expect(page.locator(".message")).to_contain_text("Started 'schema'")
    expect(page.locator(".message")).to_have_class("message success")  # not a warning
    expect(node(page, "schema")).to_have_attribute("data-state", "running")
    node(page, "schema").locator("a").click()
    expect(page.get_by_role("heading", name="Design the schema")).to_be_visible()
    expect(page.locator(".facts")).to_contain_text("rel › schema")


def test_two_people_start_the_same_node_one_wins_the_other_sees_why(page_as, alice, bob, plan):
    first, second = page_as(alice, "/plans/rel/"), page_as(bob, "/plans/rel/")
    second.evaluate("towerMayRefresh = () => false")  # bob's page has not refreshed yet
    second.wait_for_function("() => !document.querySelector('.htmx-request')")  # nor will
    first.locator(".ready li[data-node='schema']").get_by_role("button", name="Start").click()
    expect(first.locator(".message")).to_contain_text("Started")
    second.locator(".ready li[data-node='schema']").get_by_role("button", name="Start").click()
    expect(second.locator(".message")).to_contain_text("Not started")
    expect(second.locator(".message")).to_contain_text("already working on it")
    expect(second.locator(".message")).to_have_class("message")  # a warning
    assert Event.objects.filter(type=START, plan="rel", node="schema").count() == 1


def test_an_amend_with_a_cycle_is_re_shown_with_its_error(page_as, alice, plan):
    page = page_as(alice, "/plans/rel/")
    page.locator("summary", has_text="Amend the plan").click()
    page.get_by_label("Add needs").fill("schema: ui")
    page.get_by_role("button", name="Amend plan").click()
    expect(page.locator(".amend .error")).to_contain_text("schema → ui → api → schema")
    expect(page.get_by_label("Add needs")).to_have_value("schema: ui")
    assert Event.objects.filter(session="rel").count() == 1


def test_an_amend_adds_nodes_and_retires_one(page_as, alice, plan):
    page = page_as(alice, "/plans/rel/")
    page.locator("summary", has_text="Amend the plan").click()
    page.get_by_label("Add nodes").fill("e2e | End-to-end test | ui, docs")
    page.get_by_label("Retire").fill("")
    page.get_by_role("button", name="Amend plan").click()
    expect(node(page, "e2e")).to_have_attribute("data-state", "waiting")
    expect(page.locator("path.need[data-node='e2e']")).to_have_count(2)


def test_the_plan_page_refreshes_when_a_node_closes(page_as, alice, plan):
    page = page_as(alice, "/plans/rel/")
    append_event("s-schema", START, {"plan": "rel", "node": "schema"}, user=alice)
    expect(node(page, "schema")).to_have_attribute("data-state", "running")
    append_event("s-schema", CLOSE, {}, user=alice)
    expect(node(page, "schema")).to_have_attribute("data-state", "done")
    expect(node(page, "api")).to_have_attribute("data-state", "ready")


def test_closing_as_failed_shows_on_the_card_and_fails_the_dependents(page_as, alice, plan):
    append_event("s-schema", START, {"plan": "rel", "node": "schema"}, user=alice)
    page = page_as(alice, "/")
    card = page.locator(".card", has_text="Design the schema")
    expect(card.locator(".plan-ref")).to_have_text("rel › schema")
    card.locator("summary", has_text="Close").click()
    card.get_by_label("Outcome").select_option("failed")
    card.get_by_role("button", name="Close the session", exact=True).click()
    expect(page.locator(".card", has_text="Design the schema").locator(".outcome")).to_have_text(
        "failed"
    )
    page.goto(page.url.split("/", 3)[0] + "//" + page.url.split("/", 3)[2] + "/plans/rel/")
    expect(node(page, "schema")).to_have_attribute("data-state", "failed")
    expect(node(page, "api")).to_have_attribute("data-state", "upstream_failed")


def test_the_demo_plan_shows_each_node_in_its_state(page_as, alice):
    assert import_logs(DEMO) == (None, "")
    page = page_as(alice, "/plans/payments-v2/")
    expect(node(page, "api")).to_have_attribute("data-state", "running")
    expect(node(page, "refund-ui")).to_have_attribute("data-state", "upstream_failed")
