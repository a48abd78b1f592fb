"""`ct hook codex`: Codex CLI's hook events, with inputs shaped as Codex 0.169 sends them
(captured from the real program), each run as its own process against a live
server: the session appears, a message reaches the model before the next tool call in
Codex's own refusal, a wait on a person's permission blocks, the spend is read from the
rollout file, and input that is not Codex's lets it go on."""

import json

import pytest

from sessions.domain.vocabulary import BLOCK, CLOSE, MESSAGE, START, USAGE
from sessions.models import Event
from sessions.rules.append import append_event
from tests.support import real_agents
from tests.support.ct_tools import run_ct
from tests.support.git_repo import checkout as new_checkout
from tests.support.git_repo import commit

pytestmark = pytest.mark.django_db(transaction=True)

CODEX_SID = "01a24531-9975-7a11-bdc2-679c012ce946"
SESSION = f"cx-{CODEX_SID}"


@pytest.fixture
def rollout(tmp_path):
    return tmp_path / "rollout-2026-12-05T07-53-28.jsonl"


@pytest.fixture
def codex(env, repo, rollout):
    """Runs one Codex hook event of session CODEX_SID in the repo, as Codex sends it."""

    def run(event, *, stdin=None, **fields):
        payload = {
            "session_id": CODEX_SID,
            "transcript_path": str(rollout),
            "cwd": str(repo),
            "hook_event_name": event,
            "model": "gpt-5.5-codex",
            "permission_mode": "bypassPermissions",
            **({"turn_id": "t1"} if event != "SessionStart" else {"source": "startup"}),
            **fields,
        }
        done = run_ct(env, "hook", "codex", stdin=json.dumps(payload) if stdin is None else stdin)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else None

    return run


def types():
    return list(
        Event.objects.filter(session=SESSION).order_by("seq").values_list("type", flat=True)
    )


def test_session_start_starts_a_codex_session_titled_by_the_branch(codex):
    assert codex("SessionStart") is None
    start = Event.objects.get(session=SESSION, seq=1)
    assert (start.type, start.title, start.actor) == (START, "fix-login", "alice")
    assert start.agent.split()[0] == "codex"


def test_a_message_reaches_the_model_as_codexs_refusal_of_the_next_tool_call(codex, alice):
    codex("SessionStart")
    append_event(SESSION, MESSAGE, {"note": "use the staging keys"}, user=alice)
    said = codex("PreToolUse", tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="c1")
    specific = said["hookSpecificOutput"]
    assert (specific["hookEventName"], specific["permissionDecision"]) == ("PreToolUse", "deny")
    assert "- from alice: use the staging keys" in specific["permissionDecisionReason"]


def test_a_closed_session_refuses_every_tool_call(codex, alice):
    codex("SessionStart")
    append_event(SESSION, CLOSE, {"note": "stop: merged elsewhere"}, user=alice)
    said = codex("PreToolUse", tool_name="Bash", tool_input={"command": "git push"})
    assert said["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert (
        "closed by alice: stop: merged elsewhere"
        in said["hookSpecificOutput"]["permissionDecisionReason"]
    )


def test_a_permission_request_blocks_saying_what_it_asks(codex):
    codex("SessionStart")
    codex("PermissionRequest", tool_name="Bash", tool_input={"command": "rm -rf build"})
    block = Event.objects.get(session=SESSION, type=BLOCK)
    assert block.reason == "permission asked: Bash: rm -rf build"


def test_stop_then_session_end_closes_done_with_codexs_words(codex):
    codex("SessionStart")
    codex("Stop", stop_hook_active=False, last_assistant_message="done")
    codex("SessionEnd", reason="exit")
    close = Event.objects.get(session=SESSION, type=CLOSE)
    assert (close.outcome, close.note) == ("done", "ended: Codex ended the session (exit)")


def token_count(total_input, cached, output):
    usage = {"input_tokens": total_input, "cached_input_tokens": cached, "output_tokens": output}
    info = {"total_token_usage": usage, "last_token_usage": usage}
    return {"type": "event_msg", "payload": {"type": "token_count", "info": info}}


def test_the_spend_is_read_from_the_rollout_file(codex, rollout):
    lines = [
        {"type": "session_meta", "payload": {"cli_version": "0.169.0"}},
        {"type": "turn_context", "payload": {"model": "gpt-5.5-codex"}},
        token_count(1000, 600, 50),
        token_count(1000, 600, 50),  # written again: counted once
        token_count(3000, 2000, 80),
    ]
    rollout.write_text("".join(json.dumps(line) + "\n" for line in lines))
    codex("SessionStart")
    codex("Stop", stop_hook_active=False)
    usage = Event.objects.get(session=SESSION, type=USAGE)
    counts = (usage.usage_model, usage.input_tokens, usage.output_tokens, usage.cache_read_tokens)
    assert counts == ("gpt-5.5-codex", 1000, 80, 2000)


@pytest.mark.parametrize(
    "stdin",
    [
        json.dumps({"hook_event_name": "PreToolUse"}),  # no session
        json.dumps({"session_id": CODEX_SID, "hook_event_name": "BeforeTool"}),  # Gemini's
        "\x00\xff" * 1000,
        "[" * 100_000,
    ],
    ids=["missing-fields", "another-agents", "binary", "deeply-nested"],
)
def test_input_that_is_not_codexs_lets_it_go_on_and_writes_nothing(codex, stdin):
    assert codex("PreToolUse", stdin=stdin) is None
    assert types() == []


# Codex 0.169's apply_patch, as its PreToolUse hook sends it (captured from the real one).
PATCH = (
    "*** Begin Patch\n*** Add File: src/billing/ledger.py\n+x = 1\n"
    "*** Update File: README.md\n*** Move to: docs/README.md\n@@\n-a\n+b\n*** End Patch\n"
)


def test_an_apply_patch_touching_a_reserved_file_is_refused_under_deny(env, tmp_path, bob):
    shop = new_checkout(tmp_path / "shop")
    commit(shop)
    real_agents.bob_holds_billing(bob)
    base = {"session_id": CODEX_SID, "cwd": str(shop), "transcript_path": str(tmp_path / "r")}
    deny = {**env, "CT_RESERVATIONS": "deny"}
    run_ct(deny, "hook", "codex", stdin=json.dumps({**base, "hook_event_name": "SessionStart"}))
    patch = {"tool_name": "apply_patch", "tool_input": {"command": PATCH}}
    given = json.dumps({**base, "hook_event_name": "PreToolUse", **patch})
    said = json.loads(run_ct(deny, "hook", "codex", stdin=given).stdout)["hookSpecificOutput"]
    assert said["permissionDecision"] == "deny"
    assert (
        "src/billing/ledger.py is reserved by bob's session bobs"
        in said["permissionDecisionReason"]
    )
