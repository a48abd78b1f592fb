"""The real Codex CLI (pinned in tests/agents) with `ct hook codex`, headless against a
stand-in for the Responses API on loopback, in its own HOME: its session appears, a
person's message reaches the model as the refusal of its next tool call, which then never
runs, and the usage the tower holds equals what Codex's own rollout says."""

import json
import subprocess

import pytest

from sessions.domain.vocabulary import CLOSE, MESSAGE, USAGE
from sessions.models import Event
from sessions.rules.append import append_event
from tests.cli.test_claude_code import AGENTS, required
from tests.support import real_agents
from tests.support.ct_tools import CT, ct_env
from tests.support.git_repo import checkout as new_checkout
from tests.support.git_repo import commit
from tests.support.responses_standin import ResponsesStandIn

pytestmark = pytest.mark.django_db(transaction=True)

CODEX = AGENTS / "node_modules" / ".bin" / "codex"


def codex_home(home, model, model_name="stub-model"):
    folder = home / ".codex"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text(
        f'model = "{model_name}"\nmodel_provider = "stub"\n'
        f'[model_providers.stub]\nname = "stub"\nbase_url = "{model.url}"\n'
        'wire_api = "responses"\nenv_key = "STUB_KEY"\n'
    )
    words = [CT, "hooks", "codex", "--install"]
    env = ct_env(home, None, None, CODEX_HOME=str(folder))
    subprocess.run(words, env=env, check=True, capture_output=True)
    return folder


def codex_run(tmp_path, live_server, token, model, prompt, model_name="stub-model", **environment):
    """Codex started headless in a checkout of acme/shop on branch fix-cart: (its
    checkout, process)."""
    home = tmp_path / "home"
    folder = codex_home(home, model, model_name)
    env = ct_env(home, live_server.url, token, CODEX_HOME=str(folder), **environment)
    env["STUB_KEY"] = "stub"
    work = new_checkout(tmp_path / "shop", branch="fix-cart")
    commit(work)
    words = [
        str(CODEX),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-hook-trust",
        "--dangerously-bypass-approvals-and-sandbox",
        prompt,
    ]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "stdin": subprocess.DEVNULL}
    return work, subprocess.Popen(words, cwd=work, env=env, text=True, **pipes)


def finished(process):
    """Codex's JSON lines, once it exited 0."""
    out = real_agents.finished(process, timeout=120)
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.fixture
def codex():
    required(CODEX, "Codex CLI")


def test_codex_reports_its_session_and_spend_through_the_hooks(codex, tmp_path, live_server, token):
    with ResponsesStandIn("touch made_by_codex") as model:
        work, process = codex_run(tmp_path, live_server, token, model, "make a file")
        lines = finished(process)
    thread = next(line["thread_id"] for line in lines if line["type"] == "thread.started")
    session = f"cx-{thread}"
    start = Event.objects.get(session=session, seq=1)
    assert (start.title, start.actor, start.agent) == ("fix-cart", "alice", "codex 0.169.0")
    assert (work / "made_by_codex").exists()  # nothing refused it
    spent = next(line["usage"] for line in lines if line["type"] == "turn.completed")
    usage = Event.objects.filter(session=session, type=USAGE).latest("seq")
    assert (usage.usage_model, usage.cache_read_tokens, usage.output_tokens) == (
        "stub-model",
        spent["cached_input_tokens"],
        spent["output_tokens"],
    )
    assert usage.input_tokens == spent["input_tokens"] - spent["cached_input_tokens"]


def test_a_persons_message_reaches_codex_and_the_refused_command_never_runs(
    codex, tmp_path, live_server, token, alice
):
    with ResponsesStandIn("touch made_by_codex", held=True) as model:
        work, process = codex_run(tmp_path, live_server, token, model, "make a file")
        said = {"note": "use the staging keys"}
        real_agents.held_until(
            model, "cx-", lambda session: append_event(session, MESSAGE, said, user=alice)
        )
        finished(process)
    assert not (work / "made_by_codex").exists()
    told = json.dumps(model.requests[1])
    assert "use the staging keys" in told and "Command blocked by PreToolUse hook" in told


def test_a_closed_session_fences_codex_and_the_command_never_runs(
    codex, tmp_path, live_server, token, alice
):
    with ResponsesStandIn("touch pushed_by_codex", held=True) as model:
        work, process = codex_run(tmp_path, live_server, token, model, "push it")
        said = {"note": "taken over by bob"}
        real_agents.held_until(
            model, "cx-", lambda session: append_event(session, CLOSE, said, user=alice)
        )
        finished(process)
    assert not (work / "pushed_by_codex").exists()
    told = json.dumps(model.requests[1])
    assert "closed by alice: taken over by bob" in told and "Command blocked by PreToolUse" in told


def test_a_patch_to_a_reserved_path_is_refused_to_codex_under_deny(
    codex, tmp_path, live_server, token, bob
):
    real_agents.bob_holds_billing(bob)
    patch = "*** Begin Patch\n*** Add File: src/billing/ledger.py\n+x = 1\n*** End Patch\n"
    with ResponsesStandIn("true", patch=patch) as model:
        deny = {"CT_RESERVATIONS": "deny"}
        work, process = codex_run(
            tmp_path, live_server, token, model, "patch it", "gpt-5.5-codex", **deny
        )
        finished(process)
    assert not (work / "src" / "billing" / "ledger.py").exists()
    assert "reserved by bob's session bobs" in json.dumps(model.requests[1])
