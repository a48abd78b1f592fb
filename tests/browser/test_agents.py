"""What a person sees on the board as Claude Code's hooks report (`ct hook claude-code`
run as Claude Code runs it, against the live server): the README's screenshot."""

import json

import pytest
from playwright.sync_api import expect

from sessions.domain.vocabulary import MESSAGE
from sessions.rules.append import append_event
from tests.browser.conftest import ARTIFACTS, card, column
from tests.support.ct_tools import ct_env, hook_payload, run_hook

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def agents(tmp_path, live_server, token_for, alice):
    """Two Claude Code sessions of alice's agent, reporting through their hooks."""
    env = ct_env(tmp_path / "home", live_server.url, token_for(alice))

    def checkout(branch):
        folder = tmp_path / branch
        (folder / ".git").mkdir(parents=True)
        (folder / ".git" / "HEAD").write_text(f"ref: refs/heads/{branch}\n")
        return folder

    def hook(event, sid, folder, **fields):
        done = run_hook(env, hook_payload(event, sid, folder, **fields))
        assert done.returncode == 0
        return json.loads(done.stdout) if done.stdout.strip() else None

    return hook, checkout


def test_the_board_shows_hook_driven_sessions_as_they_work(page_as, alice, agents):
    hook, checkout = agents
    login, retries = checkout("fix-login-timeout"), checkout("payment-retries")
    hook("SessionStart", "a1", login)
    hook("PostToolUse", "a1", login)
    hook("Notification", "a1", login, message="Claude needs your permission to use Bash")
    hook("SessionStart", "b2", retries)
    hook("PostToolUse", "b2", retries)
    append_event("cc-b2", MESSAGE, {"note": "keep the old retry header"}, user=alice)
    page = page_as(alice)
    waiting = card(column(page, "blocked"), "fix-login-timeout")
    expect(waiting).to_contain_text("Claude needs your permission to use Bash")
    working = card(column(page, "active"), "payment-retries")
    expect(working).to_contain_text("keep the old retry header")
    said = hook("PreToolUse", "b2", retries)  # the message goes to the agent, acknowledged
    assert "keep the old retry header" in said["hookSpecificOutput"]["permissionDecisionReason"]
    expect(working).not_to_contain_text("keep the old retry header")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "board-agents.png", full_page=True)
