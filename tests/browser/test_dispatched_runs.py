"""What people see of the runs `ct dispatch` launched (docs/rules.md, "Running the plan",
"What people see"): for each running or parked node, its agent, the machine, since when,
its spend and its brief; a parked session says that the answer resumes the agent."""

import pytest
from playwright.sync_api import expect

from sessions.domain.spend import TOKEN_FIELDS
from sessions.domain.vocabulary import BLOCK, PLAN_CREATE, PROGRESS, START, USAGE
from sessions.rules.append import append_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NODES = [
    {"key": "schema", "title": "Design the schema", "brief": "Add the ledger table."},
    {"key": "docs", "title": "Write the docs"},
    {"key": "ui", "title": "Export button"},
]


@pytest.fixture
def runs(alice):
    """Two dispatched runs: `schema` at work and $15 spent, `docs` parked on a question."""
    append_event("rel", PLAN_CREATE, {"title": "Release", "nodes": NODES}, user=alice)
    for session, node in (("run-schema", "schema"), ("run-docs", "docs")):
        append_event(session, START, {"title": node, "plan": "rel", "node": node}, user=alice)
        note = f"dispatched: claude-code on build-{node}"
        append_event(session, PROGRESS, {"note": note}, user=alice)
    counts = dict.fromkeys(TOKEN_FIELDS, 0) | {"output_tokens": 1_000_000}
    append_event("run-schema", USAGE, {"model": "claude-sonnet-4-5", **counts}, user=alice)
    append_event("run-docs", BLOCK, {"reason": "Which format, Markdown or reST?"}, user=alice)


def test_each_running_node_shows_its_agent_machine_age_and_spend(page_as, alice, runs):
    page = page_as(alice, "/plans/rel/")
    running = page.locator(".running li[data-node='schema'] .dispatched")
    expect(running).to_contain_text("claude-code on build-schema since")
    expect(running).to_contain_text("spent $15.00")
    expect(page.locator(".running li[data-node='schema'] .parked")).to_have_count(0)


def test_a_running_nodes_brief_opens_beside_it(page_as, alice, runs):
    page = page_as(alice, "/plans/rel/")
    row = page.locator(".running li[data-node='schema']")
    row.get_by_text("Its brief").click()
    expect(row.locator(".brief")).to_have_text("Add the ledger table.")


def test_a_parked_node_says_the_answer_resumes_its_agent(page_as, alice, runs):
    page = page_as(alice, "/plans/rel/")
    parked = page.locator(".running li[data-node='docs']")
    expect(parked.locator(".dispatched")).to_contain_text("spent nothing reported yet")
    expect(parked.locator(".parked")).to_contain_text("resumes the agent with your answer")


def test_the_parked_sessions_page_says_so_beside_who_runs_it(page_as, alice, runs):
    page = page_as(alice, "/sessions/run-docs/")
    expect(page.locator("dd.dispatched")).to_contain_text("claude-code on build-docs")
    expect(page.locator("dd.dispatched .parked")).to_contain_text("resumes the agent")


def test_a_session_no_dispatcher_runs_says_nothing_of_one(page_as, alice, runs):
    append_event("by-hand", START, {"title": "by hand", "plan": "rel", "node": "ui"}, user=alice)
    page = page_as(alice, "/sessions/by-hand/")
    expect(page.get_by_role("heading", name="by hand")).to_be_visible()
    expect(page.locator("dd.dispatched")).to_have_count(0)
    plan = page_as(alice, "/plans/rel/")
    expect(plan.locator(".running li[data-node='ui']")).to_be_visible()
    expect(plan.locator(".running li[data-node='ui'] .dispatched")).to_have_count(0)
