"""`ct dispatch PLAN --agent codex|gemini|opencode` with the real programs (pinned in
tests/agents), each headless against a stand-in for its own model API, in a real git
repository: the hooks the dispatcher gives each agent (never the person's own settings)
adopt the claimed session, the model's shell call commits on the node's branch, and the
session closes `done` with the agent's own last answer; and one plan run by two
dispatchers of two different agents, each node stamped with the agent that did it."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sessions.domain.vocabulary import BLOCK, PLAN_CREATE, START, UNBLOCK
from sessions.models import Event
from sessions.readmodels import plan_views
from sessions.rules.append import append_event
from tests.cli.test_claude_code import AGENTS, required
from tests.cli.test_opencode_real import OFFLINE, OPENCODE, opencode_config
from tests.support.chat_standin import ChatStandIn
from tests.support.ct_tools import CT, ct_env, run_ct
from tests.support.dispatching import IDENTITY, wait_for, worktrees
from tests.support.gemini_standin import GeminiStandIn
from tests.support.git_repo import checkout, commit, git
from tests.support.responses_standin import ResponsesStandIn

pytestmark = pytest.mark.django_db(transaction=True)

COMMIT = "echo notes > NOTES.md && git add NOTES.md && git commit -qm 'Add the notes'"
ANSWER = "Committed the notes."
PINNED = json.loads((AGENTS / "package.json").read_text())["dependencies"]
LABELS = {
    "codex": f"codex {PINNED['@openai/codex']}",
    "gemini": f"gemini {PINNED['@google/gemini-cli']}",
    "opencode": f"opencode {PINNED['opencode-ai']}",
}
BINARIES = {
    "codex": AGENTS / "node_modules" / ".bin" / "codex",
    "gemini": AGENTS / "node_modules" / ".bin" / "gemini",
    "opencode": OPENCODE,
}


def stand_in(agent, held=False):
    """The agent's model: a shell call that commits the notes, then its answer."""
    if agent == "codex":
        return ResponsesStandIn(COMMIT, reply=ANSWER, held=held)
    if agent == "gemini":
        return GeminiStandIn(("run_shell_command", {"command": COMMIT}), ANSWER, held)
    return ChatStandIn(("bash", {"command": COMMIT, "description": "commit"}), ANSWER, held)


def agent_env(agent, home, live_server, token, model):
    """What the person running `ct dispatch --agent AGENT` has: the agent on PATH and
    signed in to its model (here, the stand-in), and the flags that let it act
    unattended, which are theirs to give. No hooks of theirs: the dispatcher gives them."""
    env = {**ct_env(home, live_server.url, token), **IDENTITY}
    if agent == "codex":
        folder = home / ".codex"
        folder.mkdir(parents=True)
        (folder / "config.toml").write_text(
            'model = "stub-model"\nmodel_provider = "stub"\n'
            f'[model_providers.stub]\nname = "stub"\nbase_url = "{model.url}"\n'
            'wire_api = "responses"\nenv_key = "STUB_KEY"\n'
        )
        env.update(CODEX_HOME=str(folder), STUB_KEY="stub")
        env["CT_AGENT_ARGS"] = "--dangerously-bypass-approvals-and-sandbox"
    elif agent == "gemini":
        (home / ".gemini").mkdir(parents=True)
        sign_in = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
        (home / ".gemini" / "settings.json").write_text(json.dumps(sign_in))
        env.update(GOOGLE_GEMINI_BASE_URL=model.url, GEMINI_API_KEY="stub")
        env.update(GEMINI_CLI_TRUST_WORKSPACE="true")
        env["CT_AGENT_ARGS"] = "-m gemini-2.5-flash --approval-mode=yolo"
    else:
        env.update(OPENCODE_CONFIG_CONTENT=json.dumps(opencode_config(model)), **OFFLINE)
    bins = [BINARIES[agent].parent, Path(CT).parent, Path(sys.executable).parent]
    env["PATH"] = ":".join([*map(str, bins), env["PATH"]])
    return env


def shop(tmp_path, nodes, alice):
    repo = checkout(tmp_path / "shop", branch="main")
    commit(repo)
    append_event("p", PLAN_CREATE, {"title": "Ship", "nodes": nodes}, user=alice)
    return repo


NOTES = [{"key": "a", "title": "Write the notes", "brief": "Put NOTES.md in the root."}]


@pytest.mark.parametrize("agent", ["codex", "gemini", "opencode"])
def test_the_agent_runs_a_node_in_its_worktree_and_closes_it_done(
    agent, tmp_path, live_server, token, alice
):
    required(BINARIES[agent], agent)
    repo = shop(tmp_path, NOTES, alice)
    with stand_in(agent) as model:
        env = agent_env(agent, tmp_path / "home", live_server, token, model)
        done = run_ct(
            env, "dispatch", "p", "--repo", str(repo), "--agent", agent, "--once", timeout=240
        )
    assert done.returncode == 0, done.stdout + done.stderr
    node = plan_views.plan_view("p").node("a")
    assert (node.state, node.last_attempt.note) == ("done", ANSWER)
    assert "Add the notes" in git(repo, "log", "--format=%s", "ct/p/a")
    assert "Put NOTES.md in the root." in json.dumps(model.requests[0])
    session = node.last_attempt.session
    stamped = set(Event.objects.filter(session=session).values_list("agent", flat=True))
    assert stamped == {LABELS[agent]}
    # The hooks reported into the claimed session: no session of their own.
    assert Event.objects.filter(type=START).count() == 1
    assert worktrees(repo) == [f"worktree {repo}"]


def test_one_plan_run_by_two_agents_each_node_stamped_with_its_own(
    tmp_path, live_server, token, alice
):
    for agent in ("codex", "gemini"):
        required(BINARIES[agent], agent)
    nodes = [{"key": "a", "title": "Notes"}, {"key": "b", "title": "More notes"}]
    repo = shop(tmp_path, nodes, alice)
    # Codex's model waits until both nodes are claimed, so that neither agent takes both.
    with stand_in("codex", held=True) as codex_model, stand_in("gemini") as gemini_model:
        runs = []
        for agent, model in (("codex", codex_model), ("gemini", gemini_model)):
            env = agent_env(agent, tmp_path / agent, live_server, token, model)
            words = [CT, "dispatch", "p", "--repo", str(repo), "--agent", agent, "--once"]
            pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
            runs.append(subprocess.Popen(words, env=env, **pipes))
        try:
            assert wait_for(lambda: Event.objects.filter(type=START).count() == 2, 120)
            codex_model.gate.set()
            ended = [(running.communicate(timeout=300), running.returncode) for running in runs]
        finally:
            codex_model.gate.set()
            for running in runs:
                running.kill()
    # The dispatcher that ran out of nodes first saw the other's still running (and says
    # so, ending 1); the other saw the plan done.
    assert sorted(code for _, code in ended) == [0, 1], ended
    assert all(code == 0 or "open: running 1, done 1" in out for (out, _), code in ended)
    view = plan_views.plan_view("p")
    assert view.status == "done"
    by_agent = {
        Event.objects.filter(session=node.last_attempt.session, type=START).get().agent
        for node in view.nodes
    }
    assert by_agent == {LABELS["codex"], LABELS["gemini"]}
    assert worktrees(repo) == [f"worktree {repo}"]


def test_a_parked_gemini_cli_resumes_its_own_conversation_with_the_answer(
    tmp_path, live_server, token, alice
):
    required(BINARIES["gemini"], "gemini")
    repo = shop(tmp_path, NOTES, alice)
    ask = ("run_shell_command", {"command": "ct block 'Which heading?'"})
    commits = ("run_shell_command", {"command": COMMIT})
    script = [ask, "I asked a person.", commits, ANSWER]
    with GeminiStandIn(script=script) as model:
        env = agent_env("gemini", tmp_path / "home", live_server, token, model)
        words = [CT, "dispatch", "p", "--repo", str(repo), "--agent", "gemini", "--once"]
        running = subprocess.Popen(words, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
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
    assert node.last_attempt.note == ANSWER
    resumed = json.dumps(model.requests[2])
    assert "Use a level-one heading." in resumed and "I asked a person." in resumed
    assert worktrees(repo) == [f"worktree {repo}"]
