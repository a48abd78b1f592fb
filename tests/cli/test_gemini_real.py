"""The real Gemini CLI (pinned in tests/agents) with `ct hook gemini`, headless against a
stand-in for Gemini's API on loopback, in its own HOME: its session appears, the usage
the tower holds equals what Gemini CLI itself reports, and a person's message, a close
and a reservation under `deny` each reach the model as the refusal of its tool call,
which then never runs."""

import json
import subprocess

import pytest

from sessions.domain.vocabulary import CLOSE, MESSAGE, USAGE
from sessions.models import Event
from sessions.rules.append import append_event
from tests.cli.test_claude_code import AGENTS, required
from tests.support import real_agents
from tests.support.ct_tools import CT, ct_env
from tests.support.gemini_standin import GeminiStandIn
from tests.support.git_repo import checkout as new_checkout
from tests.support.git_repo import commit

pytestmark = pytest.mark.django_db(transaction=True)

GEMINI = AGENTS / "node_modules" / ".bin" / "gemini"
MODEL = "gemini-2.5-flash"


def gemini_settings(home):
    """Its user settings: an API key's sign-in, and the hooks `ct hooks gemini --install`
    adds to them."""
    folder = home / ".gemini"
    folder.mkdir(parents=True)
    sign_in = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (folder / "settings.json").write_text(json.dumps(sign_in))
    words = [CT, "hooks", "gemini", "--install"]
    subprocess.run(words, env=ct_env(home, None, None), check=True, capture_output=True)


def gemini_run(tmp_path, live_server, token, model, environment=None):
    """Gemini CLI started headless in a checkout of acme/shop (branch fix-login):
    (the checkout, the process)."""
    home = tmp_path / "home"
    gemini_settings(home)
    env = ct_env(home, live_server.url, token, **(environment or {}))
    env.update(
        GOOGLE_GEMINI_BASE_URL=model.url, GEMINI_API_KEY="stub", GEMINI_CLI_TRUST_WORKSPACE="true"
    )
    work = new_checkout(tmp_path / "shop")
    commit(work)
    words = [str(GEMINI), "-p", "do the work", "-o", "json", "-m", MODEL, "--approval-mode=yolo"]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "stdin": subprocess.DEVNULL}
    return work, subprocess.Popen(words, cwd=work, env=env, text=True, **pipes)


def finished(process):
    """Gemini CLI's JSON answer, once it exited 0."""
    out = real_agents.finished(process)
    return json.loads(out[out.index("{") :])


def held_until(model, act):
    real_agents.held_until(model, "gm-", act)


@pytest.fixture
def gemini():
    required(GEMINI, "Gemini CLI")


def shell(command):
    return ("run_shell_command", {"command": command})


def test_gemini_cli_reports_its_session_and_spend_through_the_hooks(
    gemini, tmp_path, live_server, token
):
    with GeminiStandIn(shell("touch made_by_gemini")) as model:
        work, process = gemini_run(tmp_path, live_server, token, model)
        answer = finished(process)
    session = f"gm-{answer['session_id']}"
    start = Event.objects.get(session=session, seq=1)
    assert (start.title, start.actor, start.agent) == ("fix-login", "alice", "gemini 0.61.0")
    assert (work / "made_by_gemini").exists()  # nothing refused it
    spent = answer["stats"]["models"][MODEL]["tokens"]
    usage = Event.objects.filter(session=session, type=USAGE).latest("seq")
    assert (usage.usage_model, usage.input_tokens, usage.cache_read_tokens) == (
        MODEL,
        spent["input"],
        spent["cached"],
    )
    assert usage.output_tokens == spent["candidates"] + spent["thoughts"]


def test_a_persons_message_reaches_gemini_cli_and_the_command_never_runs(
    gemini, tmp_path, live_server, token, alice
):
    with GeminiStandIn(shell("touch made_by_gemini"), held=True) as model:
        work, process = gemini_run(tmp_path, live_server, token, model)
        said = {"note": "use the staging keys"}
        held_until(model, lambda session: append_event(session, MESSAGE, said, user=alice))
        finished(process)
    assert not (work / "made_by_gemini").exists()
    told = json.dumps(model.requests[1])
    assert "use the staging keys" in told and "Tool execution blocked" in told


def test_a_closed_session_fences_gemini_cli_and_the_command_never_runs(
    gemini, tmp_path, live_server, token, alice
):
    with GeminiStandIn(shell("touch pushed_by_gemini"), held=True) as model:
        work, process = gemini_run(tmp_path, live_server, token, model)
        said = {"note": "taken over by bob"}
        held_until(model, lambda session: append_event(session, CLOSE, said, user=alice))
        finished(process)
    assert not (work / "pushed_by_gemini").exists()
    told = json.dumps(model.requests[1])
    assert "closed by alice: taken over by bob" in told and "Tool execution blocked" in told


def test_a_reserved_path_is_refused_to_gemini_cli_under_deny(
    gemini, tmp_path, live_server, token, bob
):
    real_agents.bob_holds_billing(bob)
    call = ("write_file", {"file_path": "src/billing/ledger.py", "content": "x = 1\n"})
    with GeminiStandIn(call) as model:
        deny = {"CT_RESERVATIONS": "deny"}
        work, process = gemini_run(tmp_path, live_server, token, model, deny)
        finished(process)
    assert not (work / "src" / "billing" / "ledger.py").exists()
    told = json.dumps(model.requests[1])
    assert "reserved by bob's session bobs" in told and "Tool execution blocked" in told
