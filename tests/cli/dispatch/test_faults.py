"""`ct dispatch` under faults for real (docs/rules.md, "Running the plan"): an agent killed
mid-run, a dispatcher killed mid-run, a budget crossed mid-run, a merge that makes the
next node ready, and the tower away while an agent works. Against a live tower, in real
git repositories, with the stand-in agent of tests/support/dispatching.py."""

import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from unittest import mock

import pytest
from django.utils import timezone

from sessions.domain.vocabulary import CLOSE, PLAN_AMEND, PLAN_CREATE, START, UNBLOCK, WORK
from sessions.models import Event
from sessions.readmodels import plan_views, session_views
from sessions.rules.append import append_event
from tests.conftest import Gunicorn
from tests.support import forge
from tests.support.ct_tools import CT, hook_payload, reply_line, run_ct, run_hook
from tests.support.dispatching import (
    CHAIN,
    alive,
    background,
    make_plan,
    started_agent,
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
        pid = started_agent(env)
        assert wait_for(lambda: branch_head(repo, "ct/p/a") != branch_head(repo, "main"))
        # It says so after its commit: killed between the two, it would have said nothing.
        logs = Path(env["XDG_STATE_HOME"]) / "control-tower" / "runs"
        assert wait_for(lambda: any("did the work on" in p.read_text() for p in logs.glob("*.log")))
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
        orphan = started_agent(env)
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


# An agent whose first run crosses its node's budget, as Claude Code would: its hooks
# adopt the session, its first tool call reports $1.00 spent (the transcript TRANSCRIPT
# names), its next one is refused by the pause, and it ends. Resumed with a person's
# answer, it does the work.
SPENDING_AGENT = """
import json, os, pathlib, subprocess, sys
prompt = sys.stdin.read()
if "they answered:" in prompt:
    pathlib.Path("after-the-raise.txt").write_text(prompt)
    subprocess.run(["git", "add", "after-the-raise.txt"], check=True)
    subprocess.run(["git", "commit", "-q", "-m", "work after the raise"], check=True)
    sys.exit(0)
def hook(event, **fields):
    payload = {"session_id": "spender", "transcript_path": os.environ["TRANSCRIPT"],
               "cwd": os.getcwd(), "hook_event_name": event, **fields}
    ran = subprocess.run([os.environ["CT_BIN"], "hook", "claude-code"],
                         input=json.dumps(payload), capture_output=True, text=True)
    return ran.stdout
hook("SessionStart", source="startup")
hook("PostToolUse", tool_name="Bash", tool_input={"command": "make"}, tool_response={})
told = hook("PreToolUse", tool_name="Edit", tool_input={"file_path": "ledger.py"})
pathlib.Path(os.environ["AGENT_TOLD"]).write_text(told)
"""


def test_a_budget_crossed_mid_run_parks_the_agent_until_a_raise_and_an_answer(
    env, repo, alice, tmp_path
):
    nodes = [{"key": "a", "title": "Migrate the ledger", "budget_usd": 1}]
    append_event("p", PLAN_CREATE, {"title": "Ship", "nodes": nodes}, user=alice)
    script, transcript, told = tmp_path / "spender.py", tmp_path / "t.jsonl", tmp_path / "told"
    script.write_text(SPENDING_AGENT)
    transcript.write_text(reply_line("msg_1", "claude-haiku-4-5", input=1_000_000))
    spender = {**env, "TRANSCRIPT": str(transcript), "AGENT_TOLD": str(told)}
    running = background(spender, repo, [sys.executable, str(script)])
    try:
        assert wait_for(told.exists), "the agent never tried its second tool call"
        assert "budget spent: $1.00 of $1.00 (node a)" in told.read_text()
        session = plan_views.plan_view("p").node("a").session
        assert wait_for(lambda: len(worktrees(repo)) == 2 and session_status(session) == "blocked")
        time.sleep(1)  # parked: the session still blocked, nothing closed
        assert not Event.objects.filter(session=session, type=CLOSE).exists()
        append_event("p", PLAN_AMEND, {"budgets": {"a": 5}}, user=alice)
        append_event(session, UNBLOCK, {"note": "budget raised to $5"}, user=alice)
        assert running.wait(60) == 0
    finally:
        running.kill()
    node = plan_views.plan_view("p").node("a")
    assert (node.state, node.last_attempt.session) == ("done", session)
    prompt = git(repo, "show", "ct/p/a:after-the-raise.txt")
    assert "they answered: budget raised to $5" in prompt


def session_status(session):
    return session_views.session_view(session).status


def test_a_merge_under_done_when_merge_makes_the_next_node_ready_and_run(
    env, repo, agent, alice, live_server, settings
):
    forge.required()
    settings.GITHUB_WEBHOOK_SECRET = forge.SECRET
    git(repo, "remote", "set-url", "origin", "https://github.com/acme/shop.git")
    fields = {"title": "Ship", "nodes": CHAIN, "repo": "acme/shop", "done_when": "merge"}
    append_event("p", PLAN_CREATE, fields, user=alice)
    running = subprocess.Popen(  # no --once: it waits on the plan while a merges
        [CT, "dispatch", "p", "--repo", str(repo), "--", *agent], env=env
    )
    try:
        assert wait_for(lambda: plan_views.plan_view("p").node("a").state == "merging")
        head = branch_head(repo, "ct/p/a")
        merged = pull_request_merged("acme/shop", "ct/p/a", head)
        delivered_at = timezone.now()
        assert forge.deliver(live_server.url, "pull_request", merged).status == 200
        assert wait_for(lambda: plan_views.plan_view("p").node("b").state == "merging")
    finally:
        running.send_signal(signal.SIGTERM)
        running.wait(30)
    assert plan_views.plan_view("p").node("a").state == "done"
    b_started = Event.objects.get(session=node_session("b"), type=START).timestamp
    assert b_started >= delivered_at  # b waited for a's merge, then ran at once


def node_session(key):
    node = plan_views.plan_view("p").node(key)
    return node.session or node.last_attempt.session


def pull_request_merged(repo, branch, sha):
    """GitHub's own `closed` example, made a merge of `branch` at `sha` in `repo`."""
    payload = forge.example("pull_request", "closed")
    pr = payload["pull_request"]
    pr["number"], pr["html_url"] = 7, f"https://github.com/{repo}/pull/7"
    pr["head"]["ref"], pr["head"]["sha"], pr["head"]["repo"]["full_name"] = branch, sha, repo
    pr["merged"], pr["state"], pr["merge_commit_sha"] = True, "closed", "9" * 40
    pr["merged_at"] = timezone.now().isoformat().replace("+00:00", "Z")
    return payload


def test_with_the_tower_away_the_agent_goes_on_and_its_close_lands_once(
    env, repo, agent, alice, gunicorn, database_url, tmp_path
):
    make_plan(alice, CHAIN[:1])
    go = tmp_path / "go"
    through_gunicorn = {**env, "CT_URL": gunicorn.url, "AGENT_WORKS_WHEN": str(go)}
    running = background(through_gunicorn, repo, agent, mode="work")
    try:
        pid = started_agent(env)
        gunicorn.kill()  # the tower away: the agent works and ends meanwhile
        go.touch()
        assert wait_for(lambda: not alive(pid))
        time.sleep(1)  # the dispatcher tries its close, and is refused by no one
        back = Gunicorn(database_url, port=gunicorn.port).start()
        try:
            assert running.wait(60) == 0
        finally:
            back.stop()
    finally:
        running.kill()
    session = node_session("a")
    assert plan_views.plan_view("p").node("a").state == "done"
    assert Event.objects.filter(session=session, type=CLOSE).count() == 1
    reported = list(Event.objects.filter(session=session, type=WORK).values_list("commit_sha"))
    assert len(reported) == len(set(reported))  # no report twice
    assert reported[-1] == (branch_head(repo, "ct/p/a"),)
