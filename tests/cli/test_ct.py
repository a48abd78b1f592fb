"""`ct`, the command-line client: every subcommand run as its own process against a live
server over real HTTP (on whichever database the suite runs), with its exit statuses,
its lines for a person and its JSON."""

import json
import stat
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from sessions.domain.vocabulary import PLAN_CREATE, START
from sessions.rules.append import append_event
from tests.conftest import free_port
from tests.support.ct_tools import CT, ct_env, run_ct
from tests.support.http import http_request

pytestmark = pytest.mark.django_db(transaction=True)

CLI = Path(__file__).resolve().parents[2] / "cli" / "ct"


@pytest.fixture
def env(tmp_path, live_server, token):
    """alice's `ct`: the live server and her token in the environment."""
    return ct_env(tmp_path, live_server.url, token)


def ct(env, *args, **kwargs):
    return run_ct(env, *args, **kwargs)


def started(env, session="s1", title="Ship it"):
    done = ct(env, "start", title, "--id", session)
    assert done.returncode == 0, done.stderr
    return {**env, "CT_SESSION": session}


def view(live_server, token, session):
    return http_request(live_server.url, "GET", f"/api/sessions/{session}", token=token).json()


# Installation and shape ---------------------------------------------------------------


def test_ct_imports_the_standard_library_only():
    import ast

    for source in CLI.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top == "ct" or top in sys.stdlib_module_names, f"{source.name}: {name}"


def test_the_help_names_every_subcommand_and_the_exit_statuses(tmp_path):
    helped = ct(ct_env(tmp_path, None, None), "--help")
    assert helped.returncode == 0
    for name in ("start", "block", "unblock", "review", "close", "progress", "message"):
        assert name in helped.stdout
    for name in ("show", "ls", "plan", "claim", "feed", "wait", "login", "hook", "hooks"):
        assert name in helped.stdout
    assert "4 tower unreachable" in " ".join(helped.stdout.split())


def test_a_subcommands_help_lists_its_options(tmp_path):
    helped = ct(ct_env(tmp_path, None, None), "wait", "--help")
    assert helped.returncode == 0
    assert "--until {unblocked,closed,changed}" in helped.stdout
    assert "--timeout SECONDS" in helped.stdout


def test_a_usage_error_exits_2(env):
    assert ct(env, "block").returncode == 2  # no reason


def test_acting_without_a_session_is_a_usage_error(env):
    done = ct(env, "progress")
    assert done.returncode == 2
    assert "CT_SESSION" in done.stderr


# Acting -------------------------------------------------------------------------------


def test_start_prints_the_session_and_how_to_name_it(env, live_server, token):
    done = ct(env, "start", "Ship it", "--id", "s1", "--note", "write tests")
    assert done.returncode == 0
    assert done.stdout.splitlines()[0].startswith("started s1 · active · Ship it")
    assert "export CT_SESSION=s1" in done.stdout
    assert view(live_server, token, "s1")["next_action"] == "write tests"


def test_start_without_an_id_gets_one_from_the_tower(env):
    done = ct(env, "start", "Ship it", "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout)["id"]


def test_block_unblock_review_and_close_move_the_status(env, live_server, token):
    env = started(env)
    steps = [
        (("block", "need the keys"), "blocked"),
        (("unblock", "got them"), "active"),
        (("review", "PR 12"), "in_review"),
        (("close", "merged", "--outcome", "done"), "closed"),
    ]
    for args, status in steps:
        done = ct(env, *args)
        assert done.returncode == 0, done.stderr
        assert f" · {status} · " in done.stdout
    assert view(live_server, token, "s1")["outcome"] == "done"


def test_progress_is_a_heartbeat_with_a_note(env, live_server, token):
    env = started(env)
    assert ct(env, "progress", "half the tables moved").returncode == 0
    found = view(live_server, token, "s1")
    assert found["status"] == "active"
    assert found["progress"]["note"] == "half the tables moved"


def test_a_refused_append_exits_1_with_the_apis_code_and_sentence(env):
    env = started(env)
    done = ct(env, "unblock")
    assert done.returncode == 1
    assert done.stderr.startswith("ct: transition_not_allowed: Refused:")
    assert "Traceback" not in done.stderr


def test_a_stale_expected_seq_is_refused(env, live_server, token):
    env = started(env)
    done = ct(env, "progress", "--expected-seq", "5")
    assert done.returncode == 1
    assert "stale_expected_seq" in done.stderr
    assert view(live_server, token, "s1")["seq"] == 1


def test_a_repeated_idempotency_key_appends_once(env, live_server, token):
    env = started(env)
    for _ in range(2):
        assert ct(env, "block", "keys", "--idempotency-key", "k1").returncode == 0
    assert view(live_server, token, "s1")["blocker_count"] == 1


def test_json_prints_the_apis_answer(env):
    env = started(env)
    done = ct(env, "block", "keys", "--json")
    answer = json.loads(done.stdout)
    assert answer["event"]["reason"] == "keys"
    assert answer["session"]["status"] == "blocked"
    assert answer["position"] > 0


def test_message_reaches_the_sessions_view(env, live_server, token):
    env = started(env)
    done = ct(env, "message", "s1", "use the staging keys")
    assert done.returncode == 0
    assert "1 message(s) waiting" in done.stdout
    shown = ct(env, "show")
    assert "message from alice: use the staging keys" in shown.stdout


# Who may, and a tower away -------------------------------------------------------------


def test_an_unknown_token_exits_3(tmp_path, live_server):
    done = ct(ct_env(tmp_path, live_server.url, "ct_nonsense"), "ls")
    assert done.returncode == 3
    assert done.stderr.startswith("ct: unauthorized:")


def test_acting_on_someone_elses_session_exits_3(env, live_server, bob, token_for):
    append_event("bobs", START, {"title": "Bob's"}, user=bob)
    done = ct(env, "progress", "--session", "bobs")
    assert done.returncode == 3
    assert "forbidden" in done.stderr


def test_no_tower_configured_exits_3_and_says_how_to_sign_in(tmp_path):
    done = ct(ct_env(tmp_path, None, None), "ls")
    assert done.returncode == 3
    assert "ct login" in done.stderr


def test_a_tower_away_exits_4_without_a_traceback(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    done = ct(ct_env(tmp_path, url, "ct_any"), "ls")
    assert done.returncode == 4
    assert done.stderr.startswith(f"ct: tower unreachable at {url}")
    assert "Traceback" not in done.stderr


def test_login_checks_the_token_and_saves_it_for_its_user_only(tmp_path, live_server, token):
    bare = ct_env(tmp_path, None, None)
    done = ct(bare, "login", live_server.url, token)
    assert done.returncode == 0
    assert "as alice" in done.stdout
    saved = tmp_path / "config" / "control-tower" / "login.json"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert ct(bare, "ls").returncode == 0  # no CT_URL, no CT_TOKEN: the saved login


def test_login_with_a_bad_token_saves_nothing(tmp_path, live_server):
    done = ct(ct_env(tmp_path, None, None), "login", live_server.url, "ct_nonsense")
    assert done.returncode == 3
    assert not (tmp_path / "config" / "control-tower" / "login.json").exists()


# Reading ------------------------------------------------------------------------------


def test_ls_filters_by_status_and_mine(env, bob):
    started(env, "s1")
    started(env, "s2")
    ct({**env, "CT_SESSION": "s2"}, "block", "keys")
    append_event("bobs", START, {"title": "Bob's"}, user=bob)
    blocked = ct(env, "ls", "--status", "blocked")
    assert [line.split(" · ")[0] for line in blocked.stdout.splitlines()] == ["s2"]
    mine = ct(env, "ls", "--mine")
    assert sorted(line.split(" · ")[0] for line in mine.stdout.splitlines()) == ["s1", "s2"]


def test_feed_prints_events_with_positions_and_where_to_go_on(env):
    env = started(env)
    ct(env, "block", "keys")
    done = ct(env, "feed", "--stream", "s1")
    lines = done.stdout.splitlines()
    assert [line.split("\t")[3] for line in lines[:-1]] == ["session_start", "session_block"]
    last = int(lines[-2].split("\t")[0])
    assert lines[-1] == f"next: ct feed --after {last}"
    assert ct(env, "feed", "--after", str(last), "--stream", "s1").stdout.count("\n") == 1


# Plans --------------------------------------------------------------------------------


@pytest.fixture
def plan(alice):
    nodes = [{"key": "a", "title": "Migrate the schema"}, {"key": "b", "title": "Backfill"}]
    fields = {"title": "Release", "nodes": nodes, "lease": 30, "max_attempts": 3}
    append_event("rel", PLAN_CREATE, fields, user=alice, now=timezone.now() - timedelta(hours=4))
    return "rel"


def test_plan_prints_each_node_and_its_state(env, plan):
    done = ct(env, "plan", plan)
    assert done.returncode == 0
    assert "0/2 done" in done.stdout.splitlines()[0]
    assert "ready     a  Migrate the schema" in done.stdout


def test_plan_lists_first_what_a_claim_takes_a_reclaimable_node_included(env, plan, bob):
    # b needs nothing and unlocks nothing, as a does: plan order puts a first. a's worker
    # went silent past the lease: a is reclaimable, and a claim takes it before b.
    append_event(
        "w1",
        START,
        {"title": "A", "plan": plan, "node": "a"},
        user=bob,
        now=timezone.now() - timedelta(hours=2),
    )
    listed = ct(env, "plan", plan).stdout.splitlines()
    assert listed[1].split()[:2] == ["lapsed", "a"]
    assert listed[-1] == "ct claim takes, in order: a, b"
    assert "a of rel" in ct(env, "claim", plan).stdout


def test_claim_prints_the_node_the_session_and_a_first_attempt(env, plan):
    done = ct(env, "claim", plan)
    assert done.returncode == 0
    assert done.stdout.startswith("claimed a of rel: Migrate the schema")
    assert "first attempt" in done.stdout


def test_claim_prints_the_nodes_brief(env, alice):
    nodes = [{"key": "a", "title": "Migrate", "brief": "Move the tables.\nThen the views."}]
    append_event("briefed", PLAN_CREATE, {"title": "Release", "nodes": nodes}, user=alice)
    done = ct(env, "claim", "briefed")
    assert done.returncode == 0
    assert "brief:\n  Move the tables.\n  Then the views.\n" in done.stdout


def test_claim_prints_the_previous_workers_handoff(env, plan, bob):
    then = timezone.now() - timedelta(hours=2)
    append_event("bob-a", START, {"plan": plan, "node": "a"}, user=bob, now=then)
    append_event("bob-a", "session_progress", {"note": "half the tables moved"}, user=bob, now=then)
    done = ct(env, "claim", plan)
    assert done.returncode == 0
    assert "last attempt: session bob-a ended lapsed" in done.stdout
    assert "it was doing: half the tables moved" in done.stdout


def test_claim_prints_the_branch_and_pull_request_the_next_worker_continues(env, plan, bob):
    then = timezone.now() - timedelta(hours=2)
    append_event("bob-a", START, {"plan": plan, "node": "a"}, user=bob, now=then)
    fields = {"repo": "acme/shop", "branch": "move-tables", "commit": "a1" * 20, "pr": 12}
    append_event("bob-a", "session_work", fields, user=bob, now=then)
    done = ct(env, "claim", plan)
    assert "its work: branch move-tables of acme/shop at a1a1a1a1a1a1, PR #12" in done.stdout


def test_claim_with_nothing_ready_exits_1(env, plan):
    ct(env, "claim", plan)
    ct(env, "claim", plan)
    done = ct(env, "claim", plan)
    assert done.returncode == 1
    assert "nothing_ready" in done.stderr


# Waiting ------------------------------------------------------------------------------


def test_wait_returns_an_answer_that_landed_before_it_started(env, live_server, token):
    env = started(env)
    ct(env, "block", "which database?")
    answer = {"type": "session_unblock", "note": "use PostgreSQL"}
    http_request(live_server.url, "POST", "/api/sessions/s1/events", answer, token=token)
    done = ct(env, "wait", "--until", "unblocked", "--timeout", "10")
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == "use PostgreSQL"


def test_wait_wakes_on_the_unblock(env, live_server, token):
    env = started(env)
    ct(env, "block", "which database?")

    def answer_later():
        time.sleep(1.5)
        body = {"type": "session_unblock", "note": "use SQLite"}
        http_request(live_server.url, "POST", "/api/sessions/s1/events", body, token=token)

    person = threading.Thread(target=answer_later)
    person.start()
    done = ct(env, "wait", "--until", "unblocked", "--timeout", "20", "--interval", "0.2")
    person.join()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("unblocked: s1 · active")
    assert done.stdout.splitlines()[-1] == "use SQLite"


def test_wait_without_a_known_position_sees_a_wait_already_over(tmp_path, env, live_server, token):
    env = started(env)
    ct(env, "block", "keys")
    ct(env, "unblock", "found")
    other = ct_env(tmp_path / "elsewhere", live_server.url, token)  # knows no position
    done = ct(other, "wait", "s1", "--until", "unblocked", "--timeout", "5")
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == "found"


def test_wait_times_out_with_exit_5(env):
    env = started(env)
    ct(env, "block", "keys")
    done = ct(env, "wait", "--until", "unblocked", "--timeout", "0.5", "--interval", "0.1")
    assert done.returncode == 5
    assert "not unblocked after 0.5 s" in done.stderr


def test_wait_until_closed_and_changed(env, tmp_path, live_server, token):
    env = started(env)
    other = ct_env(tmp_path / "elsewhere", live_server.url, token)
    changed = ct(other, "wait", "s1", "--until", "changed", "--timeout", "0.5", "--interval", "0.1")
    assert changed.returncode == 5  # nothing happened since it began
    ct(env, "close", "shipped")
    closed = ct(env, "wait", "--until", "closed", "--timeout", "5")
    assert closed.returncode == 0
    assert closed.stdout.splitlines()[-1] == "shipped"


def test_waiting_for_an_unblock_of_a_closed_session_is_refused(env):
    env = started(env)
    ct(env, "block", "keys")
    ct(env, "close", "gave up", "--outcome", "abandoned")
    done = ct(env, "wait", "--until", "unblocked", "--timeout", "5")
    assert done.returncode == 1
    assert "closed" in done.stderr


def test_feed_follow_prints_what_comes_as_it_comes(env, live_server, token):
    env = started(env)
    follower = subprocess.Popen(
        [CT, "feed", "--stream", "s1", "--follow", "--interval", "0.1"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert "session_start" in follower.stdout.readline()
        ct(env, "block", "keys")
        assert "session_block" in follower.stdout.readline()
    finally:
        follower.kill()
        follower.wait()


def test_the_readmes_line_installs_ct_in_a_fresh_venv(tmp_path):
    root = CLI.parent.parent
    line = "pip install ./cli"
    assert line in (root / "README.md").read_text()
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True)
    pip = tmp_path / "venv" / "bin" / "pip"
    subprocess.run([str(pip), *line.split()[1:], "-q"], cwd=root, check=True, timeout=300)
    helped = subprocess.run([str(tmp_path / "venv" / "bin" / "ct"), "--help"], capture_output=True)
    assert helped.returncode == 0
