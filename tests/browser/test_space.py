"""Space, as people see it: a plan page lists each node's paths, marks the ready nodes
that may collide with running ones, says when the plan has no repository (its nodes
reserve nothing), and its amend form sets paths; a session page says what its node
holds, what it wrote, and who else holds those paths."""

import pytest
from playwright.sync_api import expect

from sessions.domain.vocabulary import PLAN_CREATE, PROGRESS, START
from sessions.rules.append import append_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NODES = [
    {"key": "billing", "title": "Billing", "paths": ["src/billing"]},
    {"key": "ledger", "title": "Ledger", "paths": ["src/billing/ledger.py"]},
    {"key": "docs", "title": "Docs"},
]


def make_plan(alice, repo="acme/shop"):
    fields = {"title": "Shop", "nodes": NODES, **({"repo": repo} if repo else {})}
    append_event("p", PLAN_CREATE, fields, user=alice)


def test_a_plan_page_lists_the_paths_and_marks_what_may_collide(page_as, alice):
    make_plan(alice)
    append_event("s1", START, {"plan": "p", "node": "billing"}, user=alice)
    page = page_as(alice, "/plans/p/")
    space = page.locator("section.space")
    expect(space).to_contain_text("acme/shop")
    expect(space.locator("li[data-node='billing']")).to_contain_text("src/billing")
    ready = page.locator("ol.ready li[data-node='ledger']")
    expect(ready.locator(".overlaps")).to_contain_text("may collide with billing")
    expect(page.locator("ol.ready li").last).to_have_attribute("data-node", "ledger")


def test_a_plan_without_a_repository_says_its_nodes_reserve_nothing(page_as, alice):
    make_plan(alice, repo=None)
    page = page_as(alice, "/plans/p/")
    expect(page.locator("section.space")).to_contain_text("this plan's nodes reserve nothing")


def test_the_amend_form_sets_a_nodes_paths(page_as, alice):
    make_plan(alice)
    page = page_as(alice, "/plans/p/")
    page.locator("details.amend summary").click()
    page.get_by_label("Set paths").fill("docs: docs, README.md")
    page.get_by_role("button", name="Amend plan").click()
    expect(page.locator("section.space li[data-node='docs']")).to_contain_text("README.md")


def test_a_session_page_says_what_it_holds_wrote_and_who_else_holds_it(page_as, alice, bob):
    make_plan(alice)
    append_event("s1", START, {"plan": "p", "node": "ledger"}, user=alice)
    append_event("s2", START, {"plan": "p", "node": "billing"}, user=bob)
    append_event("s1", PROGRESS, {"paths": ["src/billing/ledger.py", "src/api.py"]}, user=alice)
    page = page_as(alice, "/sessions/s1/")
    expect(page.locator(".holds")).to_contain_text("src/billing/ledger.py")
    expect(page.locator(".held-by-other")).to_contain_text(
        "src/billing/ledger.py is also held by bob's session s2"
    )
    page.locator("details.touched summary").click()
    expect(page.locator("details.touched li")).to_have_count(2)
