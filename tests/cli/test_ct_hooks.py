"""`ct hook claude-code`: each hook event, with inputs shaped as Claude Code's published
types define them (tests/ct_tools.py), run as its own process against a live server;
the spool when the tower is away, and hooks racing over it."""

import json
import socket
import stat
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.domain.vocabulary import MESSAGE, PLAN_CREATE, START, USAGE
from sessions.models import Event
from sessions.rules.append import append_event
from tests.cli.conftest import SESSION, SID
from tests.conftest import Gunicorn, free_port
from tests.support.ct_tools import ct_env, hook_payload, reply_line, run_ct, run_hook
from tests.support.http import http_request

pytestmark = pytest.mark.django_db(transaction=True)


def events_of(session):
    return list(
        Event.objects.filter(session=session).order_by("seq").values_list("type", flat=True)
    )


def view(live_server, token, session=SESSION):
    return http_request(live_server.url, "GET", f"/api/sessions/{session}", token=token).json()


def spooled(env):
    path = f"{env['XDG_STATE_HOME']}/control-tower/spool.jsonl"
    try:
        with open(path) as lines:
            return [json.loads(line) for line in lines]
    except FileNotFoundError:
        return []


# Each event ---------------------------------------------------------------------------


def test_session_start_starts_a_session_named_for_claude_codes_titled_by_the_branch(
    hook, live_server, token
):
    assert hook("SessionStart") is None
    found = view(live_server, token)
    assert (found["status"], found["title"], found["owner"]) == ("active", "fix-login", "alice")


def test_session_start_outside_git_is_titled_by_the_folder(env, tmp_path):
    folder = tmp_path / "payments-service"
    folder.mkdir()
    run_hook(env, hook_payload("SessionStart", SID, folder))
    assert Event.objects.get(session=SESSION, seq=1).title == "payments-service"


def test_a_resumed_session_starts_nothing_new(hook):
    hook("SessionStart")
    hook("SessionStart", source="resume")
    assert events_of(SESSION) == [START]


def test_ct_plan_and_ct_node_put_the_session_on_a_node(hook, env, alice):
    append_event(
        "rel", PLAN_CREATE, {"title": "R", "nodes": [{"key": "a", "title": "A"}]}, user=alice
    )
    hook("SessionStart", environment={**env, "CT_PLAN": "rel", "CT_NODE": "a"})
    start = Event.objects.get(session=SESSION, seq=1)
    assert (start.plan, start.node) == ("rel", "a")


def test_ct_claim_claims_a_node_and_tells_the_agent_its_handoff(hook, env, alice):
    nodes = [{"key": "a", "title": "Migrate the schema"}]
    append_event("rel", PLAN_CREATE, {"title": "R", "nodes": nodes}, user=alice)
    said = hook("SessionStart", environment={**env, "CT_CLAIM": "rel"})
    context = said["hookSpecificOutput"]["additionalContext"]
    assert said["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "you work on node a of plan rel: Migrate the schema" in context
    assert "first attempt" in context
    claimed = Event.objects.get(plan="rel", node="a", type=START)
    hook("Stop")
    assert events_of(claimed.session)[-1] == "session_block"


def test_stop_blocks_waiting_for_the_next_prompt_once(hook, live_server, token):
    hook("SessionStart")
    hook("Stop")
    hook("Stop", stop_hook_active=True)
    found = view(live_server, token)
    assert found["status"] == "blocked"
    assert [b["reason"] for b in found["blockers"]] == ["waiting for the next prompt"]


# Spend: the transcript's usage -------------------------------------------------------

OPUS = "claude-opus-5"


def usage_of(live_server, token):
    return view(live_server, token)["usage"]


def test_stop_sends_the_usage_the_transcript_says(hook, repo, live_server, token):
    hook("SessionStart")
    (repo / f"{SID}.jsonl").write_text(
        reply_line("msg_1", OPUS, input=10, output=5, cache_read=2_000, cache_write=300)
        + reply_line("msg_1", OPUS, input=10, output=60, cache_read=2_000, cache_write=300)
    )
    hook("Stop")
    found = usage_of(live_server, token)["by_model"][OPUS]
    assert [found[k] for k in ("input", "output", "cache_read", "cache_write")] == [
        10,
        60,
        2_000,
        300,
    ]


def test_only_the_models_whose_totals_moved_are_sent_again(hook, repo):
    hook("SessionStart")
    transcript = repo / f"{SID}.jsonl"
    transcript.write_text(
        reply_line("msg_1", OPUS, output=5) + reply_line("msg_2", "claude-haiku-4-5", output=1)
    )
    hook("Stop")
    with transcript.open("a") as more:
        more.write(reply_line("msg_3", OPUS, output=7))
    hook("Stop")
    hook("Stop")  # nothing moved
    reports = Event.objects.filter(session=SESSION, type=USAGE).order_by("seq")
    assert [(r.usage_model, r.output_tokens) for r in reports] == [
        (OPUS, 5),
        ("claude-haiku-4-5", 1),
        (OPUS, 12),
    ]


def test_session_end_sends_the_last_usage_before_the_close(hook, repo):
    hook("SessionStart")
    (repo / f"{SID}.jsonl").write_text(reply_line("msg_1", OPUS, output=5))
    hook("SessionEnd", reason="other")
    assert events_of(SESSION)[-2:] == [USAGE, "session_close"]


def test_the_usage_goes_with_the_throttled_heartbeat(hook, repo):
    hook("SessionStart")
    (repo / f"{SID}.jsonl").write_text(reply_line("msg_1", OPUS, output=5))
    hook("PostToolUse")  # the first heartbeat after the start
    hook("PostToolUse")  # throttled: no request at all
    assert events_of(SESSION).count(USAGE) == 1


def test_a_notification_blocks_with_its_message(hook, live_server, token):
    hook("SessionStart")
    hook("Notification")
    found = view(live_server, token)
    assert found["blockers"][0]["reason"] == "Claude needs your permission to use Bash"


def test_a_prompt_unblocks_with_its_first_line_as_the_answer(hook, live_server, token):
    hook("SessionStart")
    hook("Stop")
    hook("UserPromptSubmit", prompt="Use PostgreSQL 15.\nAnd keep the tests green.")
    found = view(live_server, token)
    assert (found["status"], found["next_action"]) == ("active", "Use PostgreSQL 15.")


def test_with_prompts_not_shared_the_answer_is_just_answered(hook, env, live_server, token):
    hook("SessionStart")
    hook("Stop")
    hook("UserPromptSubmit", prompt="my secret plan", environment={**env, "CT_SHARE_PROMPTS": "0"})
    assert view(live_server, token)["next_action"] == "answered"


def test_post_tool_use_sends_at_most_one_heartbeat_a_minute(hook):
    hook("SessionStart")
    hook("PostToolUse")
    hook("PostToolUse")
    hook("PostToolUse")
    assert events_of(SESSION) == [START, "session_progress"]


def progress_note(live_server, token):
    return (view(live_server, token)["progress"] or {}).get("note")


def test_a_heartbeat_names_the_command_the_agent_ran(hook, live_server, token):
    hook("SessionStart")
    hook("PostToolUse", tool_name="Bash", tool_input={"command": "pytest -q\necho done"})
    assert progress_note(live_server, token) == "Bash: pytest -q"


def test_a_heartbeat_names_the_file_the_agent_edited_from_the_project_root(
    hook, repo, live_server, token
):
    hook("SessionStart")
    edited = {"file_path": str(repo / "src" / "cart.py"), "old_string": "a", "new_string": "b"}
    hook("PostToolUse", tool_name="Edit", tool_input=edited)
    assert progress_note(live_server, token) == "Edit src/cart.py"


def test_a_heartbeats_note_is_at_most_120_characters(hook, live_server, token):
    hook("SessionStart")
    hook("PostToolUse", tool_name="Bash", tool_input={"command": "echo " + "x" * 300})
    assert len(progress_note(live_server, token)) == 120


def test_a_new_prompts_first_line_is_what_the_agent_now_does(hook, live_server, token):
    hook("SessionStart")
    hook("PostToolUse")  # the minute's heartbeat is spent: a prompt still says itself
    hook("UserPromptSubmit", prompt="Add a refund button\nwith a confirmation step")
    assert progress_note(live_server, token) == "Add a refund button"
    assert view(live_server, token)["status"] == "active"


def test_with_prompts_not_shared_a_new_prompt_is_just_new_prompt(hook, env, live_server, token):
    hook("SessionStart")
    hook("UserPromptSubmit", prompt="my secret plan", environment={**env, "CT_SHARE_PROMPTS": "0"})
    assert progress_note(live_server, token) == "new prompt"


def test_a_tool_run_after_a_permission_prompt_unblocks(hook, live_server, token):
    hook("SessionStart")
    hook("Notification")
    hook("PostToolUse")
    found = view(live_server, token)
    assert (found["status"], found["next_action"]) == ("active", "resumed")


def test_session_end_closes_the_session_with_the_reason(hook, live_server, token):
    hook("SessionStart")
    hook("SessionEnd", reason="logout")
    found = view(live_server, token)
    assert (found["status"], found["outcome"], found["next_action"]) == (
        "closed",
        "done",
        "ended: the person logged out of Claude Code",
    )


def test_a_hook_of_a_session_it_never_started_does_nothing(hook):
    assert hook("Stop") is None
    assert not Event.objects.exists()


# Messages and fencing -----------------------------------------------------------------


def person_writes(alice, note):
    append_event(SESSION, MESSAGE, {"note": note}, user=alice)


def test_pre_tool_use_hands_a_message_over_before_the_tool_runs(hook, alice, live_server, token):
    hook("SessionStart")
    person_writes(alice, "use the staging keys")
    said = hook("PreToolUse")["hookSpecificOutput"]
    assert said["hookEventName"] == "PreToolUse"
    assert said["permissionDecision"] == "deny"
    assert "- from alice: use the staging keys" in said["permissionDecisionReason"]
    assert view(live_server, token)["message_count"] == 0  # acknowledged
    assert hook("PreToolUse") is None  # handed over once


def test_handing_a_message_over_leaves_what_the_agent_is_doing_on_the_card(
    hook, alice, live_server, token
):
    hook("SessionStart")
    hook("PostToolUse", tool_name="Bash", tool_input={"command": "pytest -q"})
    person_writes(alice, "use the staging keys")
    hook("PreToolUse")
    assert progress_note(live_server, token) == "Bash: pytest -q"
    assert view(live_server, token)["message_count"] == 0


def test_pre_tool_use_with_nothing_waiting_says_nothing_and_appends_nothing(hook):
    hook("SessionStart")
    assert hook("PreToolUse") is None
    assert events_of(SESSION) == [START]


def test_a_message_that_lands_during_the_hand_over_is_not_acknowledged_unseen(
    hook, alice, env, monkeypatch, repo
):
    from ct import claude_code
    from ct.client import Tower

    hook("SessionStart")
    person_writes(alice, "first")
    for name in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, env[name])

    class MessageMeanwhile(Tower):
        def request(self, method, path, **kwargs):
            answer = super().request(method, path, **kwargs)
            if method == "GET":  # the hook has read the view: a second message lands
                person_writes(alice, "second")
            return answer

    payload = hook_payload("PreToolUse", SID, repo)
    tower = MessageMeanwhile(env["CT_URL"], env["CT_TOKEN"])
    run = claude_code.Hook(payload, tower, time.monotonic() + 5, claude_code.AGENT)
    said = claude_code.on_pre_tool_use(run)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "first" in said and "second" not in said
    assert events_of(SESSION) == [START, MESSAGE, MESSAGE]  # no acknowledgement
    again = hook("PreToolUse")["hookSpecificOutput"]["permissionDecisionReason"]
    assert "second" in again and "first" not in again


def test_a_heartbeat_hands_a_waiting_message_over_instead_of_acknowledging_it(hook, alice):
    hook("SessionStart")
    person_writes(alice, "stop after the migration")
    said = hook("PostToolUse")["hookSpecificOutput"]
    assert said == {
        "hookEventName": "PostToolUse",
        "additionalContext": said["additionalContext"],
    }
    assert "stop after the migration" in said["additionalContext"]
    assert events_of(SESSION) == [START, MESSAGE, "session_progress"]


def test_a_reclaimed_sessions_next_tool_call_is_told_to_stop_and_who_took_over(
    hook, env, alice, bob, token_for, live_server
):
    then = timezone.now() - timedelta(hours=2)
    fields = {"title": "R", "nodes": [{"key": "a", "title": "A"}], "lease": 30}
    append_event("rel", PLAN_CREATE, fields, user=alice, now=then)
    append_event(SESSION, START, {"plan": "rel", "node": "a"}, user=alice, now=then)
    hook("SessionStart", environment={**env, "CT_PLAN": "rel", "CT_NODE": "a"})  # adopts it
    claimed = http_request(
        live_server.url, "POST", "/api/plans/rel/claim", {}, token=token_for(bob)
    ).json()
    for _ in range(2):  # and every tool call after
        said = hook("PreToolUse")["hookSpecificOutput"]
        assert said["permissionDecision"] == "deny"
        assert said["permissionDecisionReason"].startswith("STOP.")
        assert f"reclaimed by session {claimed['id']}" in said["permissionDecisionReason"]


# The tower away ----------------------------------------------------------------------


@pytest.fixture
def away(env):
    """The same ct, its tower at a port where nothing listens."""
    return {**env, "CT_URL": f"http://127.0.0.1:{free_port()}"}


def test_with_the_tower_away_a_hook_exits_0_and_spools_for_its_user_only(hook, away):
    began = time.monotonic()
    hook("SessionStart", environment=away)
    assert time.monotonic() - began < 2
    [line] = spooled(away)
    assert line["path"] == "/sessions" and line["body"]["id"] == SESSION
    spool = f"{away['XDG_STATE_HOME']}/control-tower/spool.jsonl"
    assert stat.S_IMODE(__import__("os").stat(spool).st_mode) == 0o600


def test_a_hook_answers_within_2_seconds_when_the_tower_never_answers(hook, env):
    with socket.socket() as silent:  # accepts connections (the backlog), answers nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        hung = {**env, "CT_URL": f"http://127.0.0.1:{silent.getsockname()[1]}"}
        began = time.monotonic()
        hook("SessionStart", environment=hung)
        assert time.monotonic() - began < 2
    assert len(spooled(env)) == 1


def test_the_next_hook_that_reaches_the_tower_sends_the_spool_first_in_order(
    hook, away, env, live_server, token
):
    hook("SessionStart", environment=away)
    hook("Stop", environment=away)
    hook("UserPromptSubmit", prompt="yes, go", environment=away)
    hook("SessionEnd", environment=away)
    assert len(spooled(env)) == 4
    hook("SessionStart", session_id="another")  # reaches the tower
    assert events_of(SESSION) == [START, "session_block", "session_unblock", "session_close"]
    assert view(live_server, token)["status"] == "closed"
    assert spooled(env) == []


def test_twenty_racing_hooks_spool_then_flush_each_event_once_in_spool_order(
    env, away, repo, live_server, token
):
    sessions = [f"{SID[:-2]}{n:02d}" for n in range(20)]

    def race(environment, event):
        def one(sid):
            return run_hook(environment, hook_payload(event, sid, repo)).returncode

        with ThreadPoolExecutor(max_workers=20) as pool:
            assert set(pool.map(one, sessions)) == {0}

    race(away, "SessionStart")
    order = [line["body"]["id"] for line in spooled(env)]
    assert sorted(order) == sorted(f"cc-{sid}" for sid in sessions)
    race(env, "Stop")  # the tower is back: twenty hooks find it at once
    # Each hook gives up flushing at its deadline (on a loaded machine, twenty at once
    # may): the next hook that reaches the tower sends what is left.
    run_hook(env, hook_payload("PreToolUse", sessions[0], repo))
    starts = Event.objects.filter(type=START).order_by("id").values_list("session", flat=True)
    assert list(starts) == order
    for sid in sessions:
        assert events_of(f"cc-{sid}") == [START, "session_block"]
    assert spooled(env) == []


def test_the_tower_stopped_mid_session_gets_every_event_once_in_order(
    repo, tmp_path, token, database_url, transactional_db
):
    tower = Gunicorn(database_url, workers=1, threads=2).start()
    env = ct_env(tmp_path / "home", tower.url, token)

    def hook(event, **fields):
        assert run_hook(env, hook_payload(event, SID, repo, **fields)).returncode == 0

    try:
        hook("SessionStart")
        hook("PostToolUse")
        tower.stop()
        hook("Notification")
        hook("UserPromptSubmit", prompt="granted")
        hook("Stop")
        assert len(spooled(env)) == 3
        tower.start()
        hook("SessionEnd")
    finally:
        tower.stop()
    assert events_of(SESSION) == [
        START,
        "session_progress",
        "session_block",
        "session_unblock",
        "session_block",
        "session_close",
    ]
    assert Event.objects.get(session=SESSION, seq=4).note == "granted"


# The settings block -------------------------------------------------------------------


def test_hooks_prints_a_settings_block_for_every_event(env):
    block = json.loads(run_ct(env, "hooks", "claude-code").stdout)["hooks"]
    assert set(block) == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Notification",
        "Stop",
        "SessionEnd",
    }
    [group] = block["PreToolUse"]
    assert group["matcher"] == "*"
    assert group["hooks"][0]["command"].endswith("ct hook claude-code")


def test_hooks_install_merges_into_the_settings_keeping_what_is_there(env, tmp_path):
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"type": "command", "command": "./lint.sh"}
    settings.write_text(
        json.dumps(
            {"model": "opus", "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [mine]}]}}
        )
    )
    for _ in range(2):  # installing again adds nothing
        done = run_ct(env, "hooks", "claude-code", "--install", "--settings", str(settings))
        assert done.returncode == 0
    merged = json.loads(settings.read_text())
    assert merged["model"] == "opus"
    post = merged["hooks"]["PostToolUse"]
    assert post[0] == {"matcher": "Edit", "hooks": [mine]}
    assert len(post) == 2 and len(merged["hooks"]["SessionStart"]) == 1
