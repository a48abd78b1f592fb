"""The real OpenCode (pinned in tests/agents) with the plugin `ct hooks opencode
--install` writes, headless against a stand-in for OpenAI's chat completions on loopback,
in its own HOME: its session appears, the usage the tower holds equals OpenCode's own
step figures, and a person's message, a close and a reservation under `deny` each reach
the model as the refusal of its tool call, which then never runs."""

import json
import subprocess

import pytest

from sessions.domain.vocabulary import CLOSE, MESSAGE, USAGE
from sessions.models import Event
from sessions.rules.append import append_event
from tests.cli.test_claude_code import AGENTS, required
from tests.support import real_agents
from tests.support.chat_standin import ChatStandIn
from tests.support.ct_tools import CT, ct_env
from tests.support.git_repo import checkout as new_checkout
from tests.support.git_repo import commit

pytestmark = pytest.mark.django_db(transaction=True)

# npm skips OpenCode's own install script, which would link this native build in place
# of its launcher: the test runs the native build itself.
OPENCODE = AGENTS / "node_modules" / "opencode-linux-x64" / "bin" / "opencode"
# What OpenCode would fetch at its start (its model catalogue, an update, language
# servers), which a test has no network for.
OFFLINE = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
}


def opencode_config(model):
    """OpenCode's configuration: the stand-in as its only provider, tools allowed."""
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Stand-in",
        "options": {"baseURL": model.url, "apiKey": "stub"},
        "models": {"stub-model": {"name": "Stand-in"}},
    }
    return {
        "provider": {"stub": provider},
        "model": "stub/stub-model",
        "permission": {"bash": "allow", "edit": "allow"},
    }


def opencode_run(tmp_path, live_server, token, model, environment=None):
    """OpenCode started headless in a checkout of acme/shop (branch fix-login), its
    plugin installed by `ct hooks opencode --install`: (the checkout, the process)."""
    home = tmp_path / "home"
    env = ct_env(home, live_server.url, token, **(environment or {}))
    subprocess.run([CT, "hooks", "opencode", "--install"], env=env, check=True, capture_output=True)
    work = new_checkout(tmp_path / "shop")
    commit(work)
    env.update(OPENCODE_CONFIG_CONTENT=json.dumps(opencode_config(model)), PWD=str(work))
    env.update(OFFLINE)
    words = [str(OPENCODE), "run", "--format", "json", "do the work"]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "stdin": subprocess.DEVNULL}
    return work, subprocess.Popen(words, cwd=work, env=env, text=True, **pipes)


def finished(process):
    """OpenCode's JSON events, once it exited 0."""
    out = real_agents.finished(process)
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def held_until(model, act):
    real_agents.held_until(model, "oc-", act)


@pytest.fixture
def opencode():
    required(OPENCODE, "OpenCode")


def shell(command):
    return ("bash", {"command": command, "description": "run it"})


def test_opencode_reports_its_session_and_spend_through_the_plugin(
    opencode, tmp_path, live_server, token
):
    with ChatStandIn(shell("touch made_by_opencode")) as model:
        work, process = opencode_run(tmp_path, live_server, token, model)
        lines = finished(process)
    session = f"oc-{lines[0]['sessionID']}"
    start = Event.objects.get(session=session, seq=1)
    assert (start.title, start.actor, start.agent) == ("fix-login", "alice", "opencode 1.18.33")
    assert (work / "made_by_opencode").exists()  # nothing refused it
    steps = [line["part"]["tokens"] for line in lines if line["type"] == "step_finish"]
    usage = Event.objects.filter(session=session, type=USAGE).latest("seq")
    assert (usage.usage_model, usage.input_tokens, usage.cache_read_tokens) == (
        "stub-model",
        sum(step["input"] for step in steps),
        sum(step["cache"]["read"] for step in steps),
    )
    assert usage.output_tokens == sum(step["output"] + step["reasoning"] for step in steps)


def test_a_persons_message_reaches_opencode_and_the_command_never_runs(
    opencode, tmp_path, live_server, token, alice
):
    with ChatStandIn(shell("touch made_by_opencode"), held=True) as model:
        work, process = opencode_run(tmp_path, live_server, token, model)
        said = {"note": "use the staging keys"}
        held_until(model, lambda session: append_event(session, MESSAGE, said, user=alice))
        finished(process)
    assert not (work / "made_by_opencode").exists()
    assert "use the staging keys" in json.dumps(model.requests[1])


def test_a_closed_session_fences_opencode_and_the_command_never_runs(
    opencode, tmp_path, live_server, token, alice
):
    with ChatStandIn(shell("touch pushed_by_opencode"), held=True) as model:
        work, process = opencode_run(tmp_path, live_server, token, model)
        said = {"note": "taken over by bob"}
        held_until(model, lambda session: append_event(session, CLOSE, said, user=alice))
        finished(process)
    assert not (work / "pushed_by_opencode").exists()
    assert "closed by alice: taken over by bob" in json.dumps(model.requests[1])


def test_a_reserved_path_is_refused_to_opencode_under_deny(
    opencode, tmp_path, live_server, token, bob
):
    real_agents.bob_holds_billing(bob)
    call = ("write", {"filePath": "src/billing/ledger.py", "content": "x = 1\n"})
    with ChatStandIn(call) as model:
        deny = {"CT_RESERVATIONS": "deny"}
        work, process = opencode_run(tmp_path, live_server, token, model, deny)
        finished(process)
    assert not (work / "src" / "billing" / "ledger.py").exists()
    assert "reserved by bob's session bobs" in json.dumps(model.requests[1])
