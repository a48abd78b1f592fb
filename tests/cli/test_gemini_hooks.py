"""`ct hook gemini`: Gemini CLI's hook events, with inputs shaped as Gemini CLI 0.61 sends
them (captured from the real program), each run as its own process against a
live server: the session appears, a person's prompt is read past the context the hooks
added, a message reaches the model in Gemini CLI's own refusal, a reserved path is
refused to its own write tools, the spend is read from its chat file, and input that is
not Gemini CLI's lets it go on."""

import json
from pathlib import Path

import pytest

from sessions.domain.vocabulary import BLOCK, CLOSE, MESSAGE, PROGRESS, START, USAGE
from sessions.models import Event
from sessions.rules.append import append_event
from tests.support import real_agents
from tests.support.ct_tools import run_ct
from tests.support.git_repo import checkout as new_checkout
from tests.support.git_repo import commit

pytestmark = pytest.mark.django_db(transaction=True)

GEMINI_SID = "3e88d8a6-a849-43ea-9879-309f7bd8c462"
SESSION = f"gm-{GEMINI_SID}"


@pytest.fixture
def chat(tmp_path):
    return tmp_path / "session-2026-12-05T07-53-3e88d8a6.jsonl"


@pytest.fixture
def shop(tmp_path):
    folder = new_checkout(tmp_path / "shop")
    commit(folder)
    return folder


@pytest.fixture
def gemini(env, shop, chat):
    """Runs one Gemini CLI hook event of session GEMINI_SID in the shop, as it sends it."""

    def run(event, *, stdin=None, environment=None, **fields):
        payload = {
            "session_id": GEMINI_SID,
            "transcript_path": str(chat),
            "cwd": str(shop),
            "hook_event_name": event,
            "timestamp": "2026-12-05T07:53:54.040Z",
            **fields,
        }
        given = json.dumps(payload) if stdin is None else stdin
        done = run_ct({**env, **(environment or {})}, "hook", "gemini", stdin=given)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else None

    return run


def types():
    return list(
        Event.objects.filter(session=SESSION).order_by("seq").values_list("type", flat=True)
    )


def test_session_start_starts_a_gemini_session_titled_by_the_branch(gemini):
    assert gemini("SessionStart", source="startup") is None
    start = Event.objects.get(session=SESSION, seq=1)
    assert (start.type, start.actor) == (START, "alice")
    assert start.agent.split()[0] == "gemini"


def test_a_prompt_is_read_past_the_context_the_hooks_added(gemini):
    gemini("SessionStart", source="startup")
    prompt = "<hook_context>Control Tower: you work on node a</hook_context>\n\ntouch a file"
    gemini("BeforeAgent", prompt=prompt)
    assert Event.objects.filter(session=SESSION, type=PROGRESS).latest("seq").note == "touch a file"


def test_a_message_reaches_the_model_as_gemini_clis_refusal_of_the_next_tool(gemini, alice):
    gemini("SessionStart", source="startup")
    append_event(SESSION, MESSAGE, {"note": "use the staging keys"}, user=alice)
    said = gemini("BeforeTool", tool_name="run_shell_command", tool_input={"command": "ls"})
    assert said["decision"] == "deny"
    assert "- from alice: use the staging keys" in said["reason"]


def test_a_closed_session_refuses_every_tool_call(gemini, alice):
    gemini("SessionStart", source="startup")
    append_event(SESSION, CLOSE, {"note": "stop: merged elsewhere"}, user=alice)
    said = gemini("BeforeTool", tool_name="run_shell_command", tool_input={"command": "git push"})
    assert said["decision"] == "deny"
    assert "closed by alice: stop: merged elsewhere" in said["reason"]


def test_after_a_tool_the_card_says_the_shell_command(gemini):
    gemini("SessionStart", source="startup")
    given = {"command": "pytest -q"}
    gemini("AfterTool", tool_name="run_shell_command", tool_input=given, tool_response={})
    assert (
        Event.objects.filter(session=SESSION, type=PROGRESS).latest("seq").note == "Bash: pytest -q"
    )


@pytest.mark.parametrize("tool", ["write_file", "replace"])
def test_a_reserved_path_is_refused_to_gemini_clis_write_tools_under_deny(gemini, shop, bob, tool):
    real_agents.bob_holds_billing(bob)
    gemini("SessionStart", source="startup")
    target = {"file_path": str(shop / "src" / "billing" / "ledger.py")}
    said = gemini(
        "BeforeTool", tool_name=tool, tool_input=target, environment={"CT_RESERVATIONS": "deny"}
    )
    assert said["decision"] == "deny"
    assert "reserved by bob's session bobs" in said["reason"]


def test_a_tool_waiting_for_permission_blocks_with_gemini_clis_summary(gemini):
    gemini("SessionStart", source="startup")
    gemini("Notification", notification_type="ToolPermission", message="Allow rm -rf build?")
    assert Event.objects.get(session=SESSION, type=BLOCK).reason == "Allow rm -rf build?"


def test_the_turns_end_then_the_exit_closes_done_in_gemini_clis_words(gemini):
    gemini("SessionStart", source="startup")
    gemini("AfterAgent", prompt="touch a file", prompt_response="done", stop_hook_active=False)
    gemini("SessionEnd", reason="exit")
    close = Event.objects.get(session=SESSION, type=CLOSE)
    assert (close.outcome, close.note) == ("done", "ended: Gemini CLI exited")


def reply(reply_id, model="gemini-2.5-flash", **tokens):
    figures = {"input": 0, "output": 0, "cached": 0, "thoughts": 0, "tool": 0, **tokens}
    return {"id": reply_id, "type": "gemini", "content": "", "tokens": figures, "model": model}


def test_the_spend_is_read_from_the_chat_file_each_reply_once(gemini, chat):
    lines = [
        {"sessionId": GEMINI_SID, "kind": "main"},
        {"id": "u1", "type": "user", "content": [{"text": "touch a file"}]},
        reply("r1", input=100, cached=40, output=20, thoughts=5),
        {"$set": {"lastUpdated": "2026-12-05T23:19:00.081Z"}},
        reply("r1", input=100, cached=40, output=20, thoughts=5),  # written again
        reply("r2", input=300, cached=200, output=10, tool=7),
    ]
    chat.write_text("".join(json.dumps(line) + "\n" for line in lines))
    gemini("SessionStart", source="startup")
    gemini("AfterAgent", prompt="touch a file", prompt_response="done", stop_hook_active=False)
    usage = Event.objects.get(session=SESSION, type=USAGE)
    counts = (usage.usage_model, usage.input_tokens, usage.output_tokens, usage.cache_read_tokens)
    assert counts == ("gemini-2.5-flash", 60 + 107, 25 + 10, 240)


@pytest.mark.parametrize(
    "stdin",
    [
        json.dumps({"hook_event_name": "BeforeTool"}),  # no session
        json.dumps({"session_id": GEMINI_SID, "hook_event_name": "PermissionRequest"}),  # Codex's
        json.dumps([GEMINI_SID]),
        "\x00\xff" * 1000,
        "[" * 100_000,
    ],
    ids=["missing-fields", "another-agents", "not-an-object", "binary", "deeply-nested"],
)
def test_input_that_is_not_gemini_clis_lets_it_go_on_and_writes_nothing(gemini, env, stdin):
    assert gemini("BeforeTool", stdin=stdin) is None
    assert types() == []
    log = Path(env["XDG_STATE_HOME"]) / "control-tower" / "hook.log"
    assert log.read_text().strip()  # it says why
