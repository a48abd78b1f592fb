"""`ct dispatch` under faults for real (DESIGN.md, "Running the plan"): an agent killed
mid-run, a dispatcher killed mid-run, a budget crossed mid-run, a merge that makes the
next node ready, and the tower away while an agent works. Against a live tower, in real
git repositories, with the stand-in agent of tests/support/dispatching.py."""

import json
import os
import signal
from datetime import timedelta
from pathlib import Path
from unittest import mock

import pytest
from django.utils import timezone

from sessions.domain.vocabulary import CLOSE, PLAN_CREATE
from sessions.models import Event
from sessions.readmodels import plan_views
from sessions.rules.append import append_event
from tests.support.ct_tools import hook_payload, run_ct, run_hook
from tests.support.dispatching import (
    CHAIN,
    agent_pids,
    alive,
    background,
    make_plan,
    wait_for,
    worktrees,
)
from tests.support.git_repo import git

pytestmark = pytest.mark.django_db(transaction=True)


def branch_head(repo, branch):
    return git(repo, "rev-parse", "--verify", "--quiet", branch).strip()


def test_an_agent_killed_mid_run_fails_its_node_with_its_work_in_the_handoff(
    env, repo, agent, alice
):
    make_plan(alice, CHAIN[:1])
    running = background(env, repo, agent, mode="linger")
    try:
        assert wait_for(lambda: agent_pids(env)), "the agent never started"
        assert wait_for(lambda: branch_head(repo, "ct/p/a") != branch_head(repo, "main"))
        [pid] = agent_pids(env)
        os.kill(pid, signal.SIGKILL)
        assert running.wait(30) == 1  # --once: the plan is not done
    finally:
        running.kill()
    attempt = plan_views.plan_view("p").node("a").last_attempt
    assert attempt.outcome == "failed"
    assert attempt.note.startswith("killed by SIGKILL: did the work on ")
    assert (attempt.work.branch, attempt.work.commit) == ("ct/p/a", branch_head(repo, "ct/p/a"))
    retried = run_ct(env, "start", "--plan", "p", "--node", "a")  # a retry, by name
    assert retried.returncode == 0, retried.stderr
    assert plan_views.plan_view("p").node("a").state == "running"
    assert not alive(pid)


@pytest.fixture
def later():
    """The tower's clock moved on: what its lease sees once a killed dispatcher's
    sessions are quiet past it, without waiting for a minute to pass."""
    real = timezone.now
    moved = {"by": timedelta(0)}
    with mock.patch("django.utils.timezone.now", lambda: real() + moved["by"]):
        yield moved


def test_a_killed_dispatchers_run_lapses_is_reclaimed_and_its_orphan_fenced(
    env, repo, agent, alice, later
):
    append_event(
        "p", PLAN_CREATE, {"title": "Ship", "nodes": CHAIN[:1], "lease": 1}, user=alice,
        now=timezone.now() - timedelta(hours=1),
    )  # fmt: skip
    first = background(env, repo, agent, mode="sleep")
    try:
        assert wait_for(lambda: agent_pids(env)), "the agent never started"
        [orphan] = agent_pids(env)
        session = plan_views.plan_view("p").node("a").session
        orphans_hooks = {**env, "CT_SESSION": session, "CT_DISPATCHED": "1"}
        run_hook(orphans_hooks, hook_payload("SessionStart", "orphan", repo))  # adopted
        first.send_signal(signal.SIGKILL)  # no chance to end its agent or its worktree
        first.wait(30)
    finally:
        first.kill()
    Path(env["CT_PIDS"], session).unlink()
    later["by"] = timedelta(minutes=2)  # the orphan's session quiet past its lease
    second = background(env, repo, agent, mode="work")
    try:
        assert second.wait(60) == 0  # reclaimed, and done by its own agent
    finally:
        second.kill()
    node = plan_views.plan_view("p").node("a")
    assert node.state == "done" and node.last_attempt.session != session
    assert Event.objects.get(session=session, type=CLOSE).outcome == "lapsed"
    assert not alive(orphan)  # ended by the second dispatcher once its session closed
    assert worktrees(repo) == [f"worktree {repo}"]
    told = run_hook(orphans_hooks, hook_payload("PreToolUse", "orphan", repo))
    said = json.loads(told.stdout)["hookSpecificOutput"]
    assert said["permissionDecision"] == "deny"
    assert "someone else has taken this work over" in said["permissionDecisionReason"]
