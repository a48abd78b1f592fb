"""`ct dispatch PLAN --agent claude-code` with the real Claude Code (pinned in
tests/agents), headless against a stand-in for its model on loopback, in a real git
repository: the hooks of the dispatcher's own settings adopt the claimed session, the
model's Bash call commits on the node's branch, and the session closes `done` with the
agent's final answer; an agent that asks a person is parked, then resumed in its own
conversation with the answer."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from sessions.domain.vocabulary import BLOCK, PLAN_CREATE, PROGRESS, UNBLOCK, USAGE, WORK
from sessions.models import Event
from sessions.readmodels import plan_views
from sessions.rules.append import append_event
from tests.cli.test_claude_code import CLAUDE, required
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
