"""`ct dispatch PLAN --agent claude-code` with the real Claude Code (pinned in
tests/agents), headless against a stand-in for its model on loopback, in a real git
repository: the hooks of the dispatcher's own settings adopt the claimed session, the
model's Bash call commits on the node's branch, and the session closes `done` with the
agent's final answer; an agent that asks a person is parked, then resumed in its own
conversation with the answer."""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sessions.domain.vocabulary import (
    BLOCK,
    CLOSE,
    PLAN_CREATE,
    PROGRESS,
    START,
    UNBLOCK,
    USAGE,
    WORK,
)
from sessions.models import Event
from sessions.readmodels import plan_views
from sessions.rules.append import append_event
from tests.cli.test_claude_code import AGENTS, CLAUDE, required
from tests.support.ct_tools import CT, ct_env, run_ct
from tests.support.dispatching import IDENTITY, wait_for, worktrees
from tests.support.git_repo import checkout, commit, git
from tests.support.model_standin import ModelStandIn, request_text, text, tool_use

pytestmark = pytest.mark.django_db(transaction=True)

COMMIT = tool_use(
    "Bash",
    {
        "command": "echo notes > NOTES.md && git add NOTES.md && git commit -qm 'Add the notes'",
        "description": "Commit the notes",
    },
)


def project(tmp_path, alice):
    required(CLAUDE, "Claude Code")
    repo = checkout(tmp_path / "shop", branch="main")
    commit(repo)
    nodes = [{"key": "a", "title": "Write the notes", "brief": "Put NOTES.md in the root."}]
    append_event("p", PLAN_CREATE, {"title": "Ship", "nodes": nodes}, user=alice)
    return repo


def claude_env(tmp_path, live_server, token, model):
    env = {
        **ct_env(tmp_path / "home", live_server.url, token),
        **IDENTITY,
        "ANTHROPIC_BASE_URL": model.url,
        "ANTHROPIC_API_KEY": "sk-ant-standin",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CT_AGENT_ARGS": "--allowedTools Bash",
    }
    bins = [CLAUDE.parent, Path(CT).parent, Path(sys.executable).parent]
    env["PATH"] = ":".join([*map(str, bins), env["PATH"]])
    return env


def test_claude_code_runs_a_node_in_its_worktree_and_closes_it_done(
    tmp_path, live_server, token, alice
):
    repo = project(tmp_path, alice)
    script = [[COMMIT], [text("Committed the notes.\nNothing else to do.")]]
    with ModelStandIn(script) as model:
        model.gate.set()
        env = claude_env(tmp_path, live_server, token, model)
        done = run_ct(env, "dispatch", "p", "--repo", str(repo), "--once", timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    node = plan_views.plan_view("p").node("a")
    session = node.last_attempt.session
    assert (node.state, node.last_attempt.note) == ("done", "Committed the notes.")
    assert "Add the notes" in git(repo, "log", "--format=%s", "ct/p/a")
    assert "Put NOTES.md in the root." in request_text(model.requests[0])
    # The hooks reported into the claimed session: no session of their own.
    assert not Event.objects.filter(session__startswith="cc-").exists()
    kinds = list(Event.objects.filter(session=session).values_list("type", flat=True))
    assert kinds.count(WORK) == 2  # where it started, and the commit the Bash call made
    assert USAGE in kinds and PROGRESS in kinds
    assert worktrees(repo) == [f"worktree {repo}"]


def test_a_parked_claude_code_resumes_its_own_conversation_with_the_answer(
    tmp_path, live_server, token, alice
):
    repo = project(tmp_path, alice)
    ask = tool_use("Bash", {"command": "ct block 'Which heading?'", "description": "Ask"})
    script = [[ask], [text("I asked a person.")], [COMMIT], [text("Committed the notes.")]]
    with ModelStandIn(script) as model:
        model.gate.set()
        env = claude_env(tmp_path, live_server, token, model)
        args = [CT, "dispatch", "p", "--repo", str(repo), "--once"]
        running = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert wait_for(lambda: Event.objects.filter(type=BLOCK).exists(), 120)
            session = plan_views.plan_view("p").node("a").session
            assert wait_for(lambda: len(model.requests) >= 2, 60)
            time.sleep(2)  # parked once its process has ended
            append_event(session, UNBLOCK, {"note": "Use a level-one heading."}, user=alice)
            assert running.wait(240) == 0, running.communicate()
        finally:
            running.kill()
    node = plan_views.plan_view("p").node("a")
    assert (node.state, node.last_attempt.session) == ("done", session)
    assert node.last_attempt.note == "Committed the notes."
    resumed = request_text(model.requests[2])
    assert "Use a level-one heading." in resumed and "I asked a person." in resumed
    assert worktrees(repo) == [f"worktree {repo}"]


# A plan of seven nodes: a diamond (a; b and c after a; d after both), a chain (e, then
# f) and g, whose agent asks a person first.
SEVEN = [
    {"key": "a", "title": "Schema"},
    {"key": "b", "title": "API", "needs": ["a"]},
    {"key": "c", "title": "Importer", "needs": ["a"]},
    {"key": "d", "title": "Release notes", "needs": ["b", "c"]},
    {"key": "e", "title": "Docs outline"},
    {"key": "f", "title": "Docs", "needs": ["e"]},
    {"key": "g", "title": "Changelog heading", "brief": "Ask which heading to use."},
]
ANSWER = "Use a level-one heading."


def each_nodes_agent(body: dict) -> list[dict]:
    """What the model says to each node's agent, by the node its prompt names and how far
    its conversation got: commit a file named after the node, then say so; g's agent asks
    a person first, and goes on once it is resumed with the answer."""
    said = request_text(body)
    node = re.search(r"\(node (\w+) of the plan", said).group(1)
    done = said.count("tool_result")
    if node == "g" and ANSWER not in said:
        ask = {"command": "ct block 'Which heading?'", "description": "Ask a person"}
        return [tool_use("Bash", ask)] if done == 0 else [text("I asked a person.")]
    if node == "g":
        done -= 1  # the question's result
    if done == 0:
        command = f"echo {node} > {node}.txt && git add {node}.txt && git commit -qm 'Add {node}'"
        return [tool_use("Bash", {"command": command, "description": f"Commit {node}"})]
    return [text(f"Committed {node}.")]


def test_seven_nodes_run_to_done_on_three_slots_their_branches_pushed(
    tmp_path, live_server, token, alice
):
    required(CLAUDE, "Claude Code")
    repo = checkout(tmp_path / "shop", branch="main")
    commit(repo)
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(repo, "remote", "set-url", "origin", str(origin))
    append_event("p", PLAN_CREATE, {"title": "Ship", "nodes": SEVEN}, user=alice)
    with ModelStandIn(each_nodes_agent) as model:
        model.gate.set()
        env = claude_env(tmp_path, live_server, token, model)
        args = [CT, "dispatch", "p", "--repo", str(repo), "--agents", "3", "--push", "--once"]
        running = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert wait_for(lambda: Event.objects.filter(type=BLOCK).exists(), 180)
            asking = plan_views.plan_view("p").node("g").session
            append_event(asking, UNBLOCK, {"note": ANSWER}, user=alice)
            out, err = running.communicate(timeout=600)
            assert running.returncode == 0, out + err
        finally:
            running.kill()
    view = plan_views.plan_view("p")
    assert view.status == "done"
    for node in view.nodes:
        assert node.last_attempt.note == f"Committed {node.key}.", node.key
        assert node.attempts == 1  # none run twice
    pushed = git(origin, "for-each-ref", "--format=%(refname)", "refs/heads/ct/")
    assert pushed.split() == [f"refs/heads/ct/p/{node['key']}" for node in SEVEN]
    d_started = Event.objects.get(session=view.node("d").last_attempt.session, type=START)
    for need in ("b", "c"):
        closed = Event.objects.get(session=view.node(need).last_attempt.session, type=CLOSE)
        assert closed.timestamp <= d_started.timestamp  # the diamond's order held
    runs = Event.objects.filter(session__in=[n.last_attempt.session for n in view.nodes])
    pinned = json.loads((AGENTS / "package.json").read_text())["dependencies"]
    stamped = {"claude-code " + pinned["@anthropic-ai/claude-code"]}
    assert set(runs.exclude(agent=None).values_list("agent", flat=True)) == stamped
    assert not runs.filter(type__in=(START, PROGRESS, CLOSE), agent=None).exists()
    assert worktrees(repo) == [f"worktree {repo}"]
