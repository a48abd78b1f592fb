"""Where the work lands, from the agent's side: the hooks read a real git checkout (`git
init`, commits, an `origin` remote in both its forms, a worktree) and report its repo,
branch and head at SessionStart and whenever the head moves; `ct work` reports by hand;
after a merge, the agent's next tool call is told to stop."""

import json
import subprocess

import pytest

from sessions.domain.vocabulary import WORK
from sessions.models import Event
from tests.support.ct_tools import CT, ct_env, hook_payload, run_ct, run_hook
from tests.support.git_repo import checkout as new_checkout
from tests.support.git_repo import commit, git
from tests.support.http import http_request

pytestmark = pytest.mark.django_db(transaction=True)

SID = "9b1c2d3e-0000-4000-8000-00000000c0de"
SESSION = f"cc-{SID}"


@pytest.fixture
def checkout(tmp_path):
    return new_checkout(tmp_path / "shop")


@pytest.fixture
def env(tmp_path, live_server, token):
    return ct_env(tmp_path / "home", live_server.url, token)


def hook(env, folder, event, **fields):
    done = run_hook(env, hook_payload(event, SID, folder, **fields))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def reports(session=SESSION):
    return list(
        Event.objects.filter(session=session, type=WORK)
        .order_by("seq")
        .values_list("repo", "branch", "commit_sha")
    )


def test_session_start_reports_the_repo_branch_and_head(env, checkout):
    head = commit(checkout)
    hook(env, checkout, "SessionStart")
    assert reports() == [("acme/shop", "fix-login", head)]


def test_an_https_origin_names_the_repo_too(env, checkout):
    git(checkout, "remote", "set-url", "origin", "https://github.com/Acme/shop-api")
    commit(checkout)
    hook(env, checkout, "SessionStart")
    assert reports()[0][0] == "Acme/shop-api"


def test_a_new_commit_is_reported_at_the_next_tool_call_and_only_then(env, checkout):
    commit(checkout)
    hook(env, checkout, "SessionStart")
    hook(env, checkout, "PostToolUse")
    assert len(reports()) == 1  # nothing moved
    head = commit(checkout, "b.txt")
    hook(env, checkout, "PostToolUse")
    assert reports()[-1] == ("acme/shop", "fix-login", head)


def test_a_checkout_of_another_branch_is_reported(env, checkout):
    commit(checkout)
    hook(env, checkout, "SessionStart")
    git(checkout, "checkout", "-q", "-b", "fix-logout")
    hook(env, checkout, "PostToolUse")
    assert reports()[-1][1] == "fix-logout"


def test_packed_refs_and_a_worktree_are_read_as_git_writes_them(env, checkout, tmp_path):
    head = commit(checkout)
    git(checkout, "pack-refs", "--all")
    tree = tmp_path / "tree"
    git(checkout, "worktree", "add", "-q", "-b", "side", str(tree))
    hook(env, tree, "SessionStart")
    assert reports() == [("acme/shop", "side", head)]


def test_a_checkout_with_no_commit_yet_reports_nothing(env, checkout):
    hook(env, checkout, "SessionStart")
    assert reports() == []


def test_ct_work_reports_this_checkout_or_what_it_is_given(env, checkout, live_server, token):
    head = commit(checkout)
    assert run_ct(env, "start", "Ship", "--id", "s1").returncode == 0
    done = subprocess.run(
        [CT, "work", "--session", "s1"], cwd=checkout, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert reports("s1") == [("acme/shop", "fix-login", head)]
    by_hand = run_ct(env, "work", "--session", "s1", "--pr", "94", "--pr-state", "open")
    assert by_hand.returncode == 0, by_hand.stderr
    view = http_request(live_server.url, "GET", "/api/sessions/s1", token=token).json()
    assert view["work"]["pr"] == {"number": 94, "url": None, "state": "open"}


def test_after_a_merge_the_agents_next_tool_call_is_told_to_stop(env, checkout, live_server, token):
    head = commit(checkout)
    hook(env, checkout, "SessionStart")
    merged = {"type": WORK, "pr": 94, "pr_state": "merged", "commit": head}
    http_request(live_server.url, "POST", f"/api/sessions/{SESSION}/events", merged, token=token)
    said = hook(env, checkout, "PreToolUse")["hookSpecificOutput"]
    assert said["permissionDecision"] == "deny"
    told = said["permissionDecisionReason"]
    assert f"PR #94 merged at {head}: your work is in; stop pushing" in told
    again = hook(env, checkout, "PreToolUse")["hookSpecificOutput"]  # every call from now on
    assert again["permissionDecision"] == "deny"
