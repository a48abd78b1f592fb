"""`ct dispatch PLAN -- COMMAND` (docs/rules.md, "Running the plan"), against a live tower in
real git repositories with a stand-in agent (a Python script that reads its prompt,
commits a file and exits as told): each node claimed, run in a worktree of its own on
`ct/<plan>/<node>` and closed by how its process ended; a run past its time ended; a
session closed by a person fences its agent; SIGTERM releases the running nodes; and
nothing is left behind: no process, no worktree."""

import json
import signal
import socket
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from sessions.domain.vocabulary import BLOCK, CLOSE, PLAN_CREATE, START, UNBLOCK
from sessions.models import Event
from sessions.readmodels import plan_views
from sessions.rules.append import append_event
from tests.support.ct_tools import CT, run_ct
from tests.support.dispatching import (
    CHAIN,
    agent_pids,
    alive,
    background,
    dispatch,
    make_plan,
    started_agent,
    wait_for,
    worktrees,
)
from tests.support.git_repo import git

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_chain_runs_to_done_each_node_on_its_own_branch(env, repo, agent, alice):
    make_plan(alice, CHAIN)
    done = dispatch(env, repo, agent, "--once")
    assert done.returncode == 0, done.stderr
    assert "plan p: done" in done.stdout
    view = plan_views.plan_view("p")
    assert view.status == "done"
    for node in view.nodes:
        assert node.last_attempt.outcome == "done"
        assert node.last_attempt.note.startswith("did the work on ")
        log = git(repo, "log", "--format=%s", f"ct/p/{node.key}")
        assert f"work of {node.last_attempt.session}" in log
    assert worktrees(repo) == [f"worktree {repo}"]
    assert not any(alive(pid) for pid in agent_pids(env))
    record = Path(env["XDG_STATE_HOME"]) / "control-tower" / "dispatch" / "p.json"
    assert json.loads(record.read_text()) == {"runs": {}}  # every run forgotten, the record whole


def test_the_tower_is_told_which_agent_runs_the_node_and_where(env, repo, agent, alice):
    make_plan(alice, CHAIN[:1])
    assert dispatch(env, repo, agent, "--once").returncode == 0
    session = plan_views.plan_view("p").node("a").last_attempt.session
    run = plan_views.dispatches([session])[session]
    assert (run.agent, run.host) == (Path(sys.executable).name, socket.gethostname())


def test_the_agent_is_given_its_title_brief_and_plan(env, repo, agent, alice):
    make_plan(alice, CHAIN[:1])
    assert dispatch(env, repo, agent, "--once").returncode == 0
    session = plan_views.plan_view("p").node("a").last_attempt.session
    prompt = git(repo, "show", f"ct/p/a:{session}.txt")
    assert "Your task: Schema (node a of the plan Ship)." in prompt
    assert "Add the table." in prompt


def test_a_failing_agent_fails_its_node_saying_how_it_ended(env, repo, agent, alice):
    make_plan(alice, CHAIN[:1])
    done = dispatch(env, repo, agent, "--once", mode="fail")
    assert done.returncode == 1
    node = plan_views.plan_view("p").node("a")
    assert node.state == "failed"
    assert node.last_attempt.note.startswith("exit status 3: did the work on ")


def test_a_run_past_its_time_is_ended_and_failed(env, repo, agent, alice):
    make_plan(alice, CHAIN[:1])
    done = dispatch(env, repo, agent, "--once", "--run-timeout", "0.03", mode="sleep")
    assert done.returncode == 1
    node = plan_views.plan_view("p").node("a")
    assert node.last_attempt.note == "ran past 0.03 minutes"
    assert not any(alive(pid) for pid in agent_pids(env))
    assert worktrees(repo) == [f"worktree {repo}"]


def test_a_person_closing_the_session_ends_its_agent_within_two_seconds(env, repo, agent, alice):
    make_plan(alice, CHAIN[:1])
    running = background(env, repo, agent)
    try:
        pid = started_agent(env)
        session = plan_views.plan_view("p").node("a").session
        append_event(session, CLOSE, {"outcome": "abandoned", "note": "wrong approach"}, user=alice)
        closed_at = time.monotonic()
        assert wait_for(lambda: not alive(pid), seconds=10)
        assert time.monotonic() - closed_at < 2.5
        assert running.wait(30) == 1  # the node failed: abandoned by a person
    finally:
        running.kill()
    assert worktrees(repo) == [f"worktree {repo}"]


def test_sigterm_releases_the_running_nodes_and_leaves_nothing(env, repo, agent, alice):
    make_plan(alice, CHAIN[:1])
    running = background(env, repo, agent)
    try:
        pid = started_agent(env)
        running.send_signal(signal.SIGTERM)
        running.wait(30)
    finally:
        running.kill()
    assert not alive(pid)
    node = plan_views.plan_view("p").node("a")
    assert node.state == "ready"
    assert (node.last_attempt.outcome, node.last_attempt.note) == ("released", "dispatcher stopped")
    assert worktrees(repo) == [f"worktree {repo}"]


def test_a_worktree_that_cannot_be_made_fails_the_session_with_the_reason(
    env, repo, agent, alice, tmp_path
):
    make_plan(alice, CHAIN[:1])
    git(repo, "worktree", "add", "-q", "-b", "ct/p/a", str(tmp_path / "elsewhere"))
    done = dispatch(env, repo, agent, "--once")
    assert done.returncode == 1
    node = plan_views.plan_view("p").node("a")
    assert node.state == "failed"
    assert node.last_attempt.note.startswith("no worktree could be made: ")
    assert "already" in node.last_attempt.note


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        ((), "claude is not on PATH"),
        (("--agents", "0"), "--agents must be from 1 to 64"),
        (("--run-timeout", "0"), "--run-timeout must be more than 0"),
        (("--base", "no-such-ref"), "--base no-such-ref names no commit"),
    ],
)
def test_bad_flags_are_refused_with_exit_2_and_nothing_claimed(
    env, repo, agent, alice, flags, said
):
    make_plan(alice, CHAIN)
    command = ("--", *agent) if flags else ()
    done = run_ct(env, "dispatch", "p", "--repo", str(repo), *flags, *command)
    assert done.returncode == 2
    assert said in done.stderr
    assert not Event.objects.exclude(session="p").exists()


def test_a_folder_that_is_no_git_checkout_is_refused(env, agent, alice, tmp_path):
    make_plan(alice, CHAIN)
    done = run_ct(env, "dispatch", "p", "--repo", str(tmp_path), "--", *agent)
    assert done.returncode == 2
    assert "is not in a git checkout" in done.stderr


def test_an_unknown_plan_is_refused_with_exit_1(env, repo, agent):
    done = run_ct(env, "dispatch", "nope", "--repo", str(repo), "--", *agent)
    assert done.returncode == 1
    assert "no plan 'nope'" in done.stderr
    assert not Event.objects.exists()


def test_the_agent_commits_in_its_worktree_on_its_nodes_branch(env, repo, agent, alice):
    make_plan(alice, CHAIN[:1])
    assert dispatch(env, repo, agent, "--once").returncode == 0
    session = plan_views.plan_view("p").node("a").last_attempt.session
    assert git(repo, "branch", "--show-current") == "main"  # the checkout itself untouched
    assert sorted(git(repo, "ls-tree", "--name-only", "ct/p/a").splitlines()) == sorted(
        ["a.txt", f"{session}.txt"]
    )


def test_a_dispatcher_cleans_what_a_killed_one_left_of_a_closed_session(env, repo, agent, alice):
    make_plan(alice, CHAIN[:1])
    first = background(env, repo, agent)
    try:
        pid = started_agent(env)
        first.send_signal(signal.SIGKILL)  # no chance to end its agent or its worktree
        first.wait(30)
    finally:
        first.kill()
    assert alive(pid) and len(worktrees(repo)) == 2
    session = plan_views.plan_view("p").node("a").session
    append_event(session, CLOSE, {"outcome": "abandoned", "note": "taken over"}, user=alice)
    assert dispatch(env, repo, agent, "--once").returncode == 1  # the node failed
    assert wait_for(lambda: not alive(pid), seconds=5)
    assert worktrees(repo) == [f"worktree {repo}"]


def parked(env) -> str:
    """Once the dispatched agent has asked a person (`ct block`) and ended: its session."""
    assert wait_for(lambda: Event.objects.filter(type=BLOCK).exists()), "it never asked"
    [pid] = agent_pids(env)
    assert wait_for(lambda: not alive(pid)), "the asking agent never ended"
    time.sleep(1)  # parked: no process, the session still blocked and unclosed
    session = plan_views.plan_view("p").node("a").session
    assert not Event.objects.filter(session=session, type=CLOSE).exists()
    return session


def test_an_agent_that_asks_a_person_is_parked_then_resumed_with_the_answer(
    env, repo, agent, alice
):
    make_plan(alice, CHAIN[:1])
    running = background(env, repo, agent, mode="ask")
    try:
        session = parked(env)
        assert len(worktrees(repo)) == 2
        append_event(session, UNBLOCK, {"note": "use postgres"}, user=alice)
        assert running.wait(60) == 0
    finally:
        running.kill()
    node = plan_views.plan_view("p").node("a")
    assert (node.state, node.last_attempt.session) == ("done", session)
    prompt = git(repo, "show", f"ct/p/a:{session}.txt")
    assert "You asked a person, and they answered: use postgres" in prompt
    assert worktrees(repo) == [f"worktree {repo}"]


def test_an_answer_given_while_the_agent_ran_resumes_it_once_it_ends(
    env, repo, agent, alice, tmp_path
):
    make_plan(alice, CHAIN[:1])
    go = tmp_path / "go"
    running = background({**env, "AGENT_ENDS_WHEN": str(go)}, repo, agent, mode="ask")
    try:
        assert wait_for(lambda: Event.objects.filter(type=BLOCK).exists()), "it never asked"
        session = plan_views.plan_view("p").node("a").session
        append_event(session, UNBLOCK, {"note": "use postgres"}, user=alice)
        go.touch()  # it ends without having heard the answer
        assert running.wait(60) == 0
    finally:
        running.kill()
    node = plan_views.plan_view("p").node("a")
    assert (node.state, node.last_attempt.session) == ("done", session)
    prompt = git(repo, "show", f"ct/p/a:{session}.txt")
    assert "You asked a person, and they answered: use postgres" in prompt


def test_an_agent_that_waited_for_its_answer_is_not_resumed_with_it(env, repo, agent, alice):
    make_plan(alice, CHAIN[:1])
    running = background({**env, "AGENT_WAITS": "1"}, repo, agent, mode="ask")
    try:
        assert wait_for(lambda: Event.objects.filter(type=BLOCK).exists()), "it never asked"
        session = plan_views.plan_view("p").node("a").session
        append_event(session, UNBLOCK, {"note": "use postgres"}, user=alice)
        assert running.wait(60) == 0
    finally:
        running.kill()
    assert plan_views.plan_view("p").node("a").state == "done"
    notes = Event.objects.filter(session=session).values_list("note", flat=True)
    assert [note for note in notes if note and note.startswith("resumed")] == []


def test_a_restarted_dispatcher_takes_up_the_parked_sessions_and_resumes_them(
    env, repo, agent, alice
):
    make_plan(alice, CHAIN[:1])
    first = background(env, repo, agent, mode="ask")
    try:
        session = parked(env)
        first.send_signal(signal.SIGTERM)
        assert first.wait(30) == 1  # --once: stopped with the node not done
    finally:
        first.kill()
    assert not Event.objects.filter(session=session, type=CLOSE).exists()  # still parked
    second = background(env, repo, agent, mode="ask")
    try:
        time.sleep(1)
        append_event(session, UNBLOCK, {"note": "use postgres"}, user=alice)
        assert second.wait(60) == 0
    finally:
        second.kill()
    assert plan_views.plan_view("p").node("a").last_attempt.session == session
    assert "they answered: use postgres" in git(repo, "show", f"ct/p/a:{session}.txt")


def test_a_worktree_an_earlier_attempt_left_does_not_stop_a_reclaim(env, repo, agent, alice):
    append_event(
        "p", PLAN_CREATE, {"title": "Ship", "nodes": CHAIN[:1], "lease": 1}, user=alice,
        now=timezone.now() - timedelta(hours=2),
    )  # fmt: skip
    append_event("old", START, {"plan": "p", "node": "a"}, user=alice,
                 now=timezone.now() - timedelta(hours=2))  # fmt: skip
    left = Path(env["XDG_STATE_HOME"]) / "control-tower" / "worktrees" / "p" / "a-old"
    git(repo, "worktree", "add", "-q", "-b", "ct/p/a", str(left))
    done = dispatch(env, repo, agent, "--once")
    assert done.returncode == 0, done.stdout + done.stderr
    node = plan_views.plan_view("p").node("a")
    assert node.state == "done" and node.last_attempt.session != "old"
    assert worktrees(repo) == [f"worktree {repo}"]


def test_push_sends_each_finished_branch_to_origin(env, repo, agent, alice, tmp_path):
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(repo, "remote", "set-url", "origin", str(origin))
    make_plan(alice, CHAIN)
    assert dispatch(env, repo, agent, "--once", "--push").returncode == 0
    pushed = git(origin, "for-each-ref", "--format=%(refname)", "refs/heads/ct/")
    assert pushed.splitlines() == ["refs/heads/ct/p/a", "refs/heads/ct/p/b"]


def test_two_dispatchers_on_one_plan_run_no_node_twice(env, repo, agent, alice):
    make_plan(alice, [{"key": f"n{i}", "title": f"Node {i}"} for i in range(6)])
    args = [CT, "dispatch", "p", "--repo", str(repo), "--agents", "2", "--once", "--", *agent]
    both = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE) for _ in range(2)]
    try:
        # Each exits when nothing is left for it: 1 if the other still ran the last node.
        codes = [running.wait(90) for running in both]
        nodes = plan_views.plan_view("p").nodes
        assert 0 in codes, {n.key: (n.state, n.last_attempt and n.last_attempt.note) for n in nodes}
    finally:
        for running in both:
            running.kill()
    view = plan_views.plan_view("p")
    assert view.status == "done"
    assert [node.attempts for node in view.nodes] == [1] * 6


def test_a_node_another_worker_makes_ready_is_claimed_within_a_second_or_two(
    env, repo, agent, alice, caplog
):
    make_plan(alice, CHAIN)
    append_event("alices", START, {"plan": "p", "node": "a"}, user=alice)  # a person works a
    args = [CT, "dispatch", "p", "--repo", str(repo), "--", *agent]
    running = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(3)  # nothing ready: it follows the plan's feed, claiming nothing
        assert not Event.objects.filter(type=START, node="b").exists()
        refused = [r for r in caplog.records if "/api/plans/p/claim" in r.getMessage()]
        assert len(refused) == 1  # one claim found nothing; then only reads of the feed
        append_event("alices", CLOSE, {"outcome": "done"}, user=alice)
        closed_at = time.monotonic()
        assert wait_for(lambda: Event.objects.filter(type=START, node="b").exists(), 10)
        assert time.monotonic() - closed_at < 2
    finally:
        running.send_signal(signal.SIGTERM)
        running.wait(30)
        running.kill()


def test_an_idle_dispatcher_waiting_on_the_feed_stops_at_once_on_sigterm(env, repo, agent, alice):
    make_plan(alice, CHAIN)
    append_event("alices", START, {"plan": "p", "node": "a"}, user=alice)  # nothing ready
    args = [CT, "dispatch", "p", "--repo", str(repo), "--", *agent]
    running = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(2)  # in its long poll of the plan's feed
        running.send_signal(signal.SIGTERM)
        asked = time.monotonic()
        assert running.wait(10) == 0
        assert time.monotonic() - asked < 2  # not at the end of the poll's 15 s
    finally:
        running.kill()
