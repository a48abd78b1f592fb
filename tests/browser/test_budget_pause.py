"""The pause-and-raise flow end to end (docs/rules.md, "Spend"): the real hooks pause an
agent whose node spent its budget; a person sees it on the board, raises the budget from
the plan page and unblocks the session from its card; the hooks let the agent go on."""

import json

import pytest
from playwright.sync_api import expect

from sessions.domain.vocabulary import PLAN_CREATE
from sessions.rules.append import append_event
from tests.browser.conftest import act_on_card, card, column
from tests.support.ct_tools import ct_env, hook_payload, reply_line, run_hook

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SID = "1b2c3d4e-0000-4000-8000-00000000b0d6"


@pytest.fixture
def hook(tmp_path, live_server, token):
    """Runs one of Claude Code's hook events, as Claude Code does, in a checkout whose
    transcript says the agent spent $1.00 (a million input tokens at $1 a million)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/fix-login\n")
    transcript = repo / f"{SID}.jsonl"
    transcript.write_text(reply_line("msg_1", "claude-haiku-4-5", input=1_000_000, output=0))
    env = ct_env(tmp_path / "home", live_server.url, token)

    def run(event, environment=None, **fields):
        payload = hook_payload(event, SID, repo, **fields)  # its transcript: the one above
        done = run_hook({**env, **(environment or {})}, payload)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else None

    return run


def test_paused_by_the_hooks_raised_and_unblocked_on_the_pages_and_let_go_on(hook, page_as, alice):
    nodes = [{"key": "a", "title": "Migrate the ledger", "budget_usd": 1}]
    append_event("rel", PLAN_CREATE, {"title": "Release", "nodes": nodes}, user=alice)
    hook("SessionStart", {"CT_PLAN": "rel", "CT_NODE": "a"})
    hook("PostToolUse", tool_name="Bash", tool_input={"command": "make"})  # usage sent

    paused = hook("PreToolUse", tool_name="Edit", tool_input={"file_path": "ledger.py"})
    reason = paused["hookSpecificOutput"]["permissionDecisionReason"]
    assert paused["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "budget spent: $1.00 of $1.00 (node a)" in reason

    board = page_as(alice, "/")
    paused_card = card(board, "fix-login")  # the hooks title a session by its branch
    expect(paused_card).to_contain_text("budget spent: $1.00 of $1.00 (node a)")
    expect(board.locator(".attention-over_budget")).to_contain_text("fix-login")

    plan = page_as(alice, "/plans/rel/")
    expect(plan.locator("[data-budget='a']")).to_contain_text("budget spent")
    plan.get_by_label("Whose budget").select_option("a")
    plan.get_by_label("New budget (US dollars)").fill("5")
    plan.get_by_role("button", name="Set budget").click()
    expect(plan.locator("[data-budget='a']")).to_contain_text("spent $1.00 of $5.00")
    expect(plan.locator("[data-budget='a']")).not_to_contain_text("budget spent")

    board.reload()
    act_on_card(board, "fix-login", "Unblock")
    expect(card(column(board, "active"), "fix-login")).to_be_visible()

    # The person's answer reaches the agent once (docs/rules.md, "Messages"), then it goes on.
    told = hook("PreToolUse", tool_name="Edit", tool_input={"file_path": "ledger.py"})
    assert "alice answered: go on" in told["hookSpecificOutput"]["permissionDecisionReason"]
    assert hook("PreToolUse", tool_name="Edit", tool_input={"file_path": "ledger.py"}) is None
