"""The hooks and space (docs/rules.md, "Space"): before a write, who else holds the path —
told (`CT_RESERVATIONS=warn`, the default) or refused (`deny`) — from a copy of the
repo's reservations at most 15 s old; the agent's own node never counts; a path outside
the repo is never reserved; a tower away lets the write through; written paths go with
the next heartbeat. A real git checkout and real absolute paths, as Claude Code sends
them, against a live server."""

import json
import os

import pytest

from sessions.domain.vocabulary import PLAN_CREATE, PROGRESS, START
from sessions.models import Event
from sessions.rules.append import append_event
from tests.support import real_agents
from tests.support.ct_tools import ct_env, hook_payload, run_ct, run_hook
from tests.support.git_repo import checkout as new_checkout
from tests.support.git_repo import commit

pytestmark = pytest.mark.django_db(transaction=True)

SID = "2c3d4e5f-0000-4000-8000-00000000face"
SESSION = f"cc-{SID}"


@pytest.fixture
def shop(tmp_path):
    folder = new_checkout(tmp_path / "shop")
    commit(folder)
    (folder / "src" / "billing").mkdir(parents=True)
    return folder


@pytest.fixture
def env(tmp_path, live_server, token):
    return ct_env(tmp_path / "home", live_server.url, token)


@pytest.fixture
def bob_holds_billing(bob):
    nodes = [
        {"key": "billing", "title": "Billing", "paths": ["src/billing"]},
        {"key": "docs", "title": "Docs", "paths": ["docs"]},
    ]
    append_event("p", PLAN_CREATE, {"title": "Shop", "repo": "acme/shop", "nodes": nodes}, user=bob)
    append_event("bobs", START, {"plan": "p", "node": "billing"}, user=bob)


def hook(env, folder, event, environment=None, **fields):
    done = run_hook({**env, **(environment or {})}, hook_payload(event, SID, folder, **fields))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def write(env, folder, path, environment=None, tool="Write"):
    field = "notebook_path" if tool == "NotebookEdit" else "file_path"
    return hook(env, folder, "PreToolUse", environment, tool_name=tool, tool_input={field: path})


def test_by_default_the_write_runs_and_the_agent_is_told_who_holds_it(env, shop, bob_holds_billing):
    hook(env, shop, "SessionStart")
    said = write(env, shop, str(shop / "src" / "billing" / "ledger.py"))["hookSpecificOutput"]
    assert "permissionDecision" not in said
    assert (
        "src/billing/ledger.py is reserved by bob's session bobs (node billing of plan p)"
        in said["additionalContext"]
    )


def test_under_deny_the_write_is_refused_with_that_sentence(env, shop, bob_holds_billing):
    hook(env, shop, "SessionStart")
    deny = {"CT_RESERVATIONS": "deny"}
    said = write(env, shop, str(shop / "src" / "billing" / "ledger.py"), deny)
    assert said["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert (
        "reserved by bob's session bobs" in said["hookSpecificOutput"]["permissionDecisionReason"]
    )


def test_the_next_heartbeat_says_what_was_refused_and_why(env, shop, bob_holds_billing):
    hook(env, shop, "SessionStart")
    write(env, shop, str(shop / "src" / "billing" / "ledger.py"), {"CT_RESERVATIONS": "deny"})
    hook(env, shop, "PostToolUse", tool_name="Bash", tool_input={"command": "make"})
    notes = Event.objects.filter(session=SESSION, type=PROGRESS).values_list("note", flat=True)
    said = [note for note in notes if note and note.startswith("refused ")]
    assert said == [
        "refused Write src/billing/ledger.py: reserved by bob's session bobs (node billing of"
        " plan p); then Bash: make"
    ]


@pytest.mark.parametrize("tool", ["Edit", "MultiEdit", "NotebookEdit"])
def test_every_tool_that_writes_a_file_is_checked(env, shop, bob_holds_billing, tool):
    hook(env, shop, "SessionStart")
    said = write(env, shop, str(shop / "src" / "billing" / "a.ipynb"), {}, tool)
    assert "reserved by bob" in said["hookSpecificOutput"]["additionalContext"]


def test_a_path_nobody_holds_says_nothing(env, shop, bob_holds_billing):
    hook(env, shop, "SessionStart")
    assert write(env, shop, str(shop / "README.md")) is None


def test_a_path_in_a_nested_folder_is_taken_from_the_repos_root(env, shop, bob_holds_billing):
    inner = shop / "src"
    hook(env, inner, "SessionStart")
    said = write(env, inner, str(inner / "billing" / "tax.py"))
    assert "src/billing/tax.py is reserved" in said["hookSpecificOutput"]["additionalContext"]


def test_a_symlink_into_a_held_folder_is_resolved(env, shop, bob_holds_billing):
    os.symlink(shop / "src" / "billing", shop / "shortcut")
    hook(env, shop, "SessionStart")
    said = write(env, shop, str(shop / "shortcut" / "ledger.py"))
    assert "src/billing/ledger.py is reserved" in said["hookSpecificOutput"]["additionalContext"]


def test_a_path_outside_the_repo_is_never_reserved(env, shop, tmp_path, bob_holds_billing):
    hook(env, shop, "SessionStart")
    assert write(env, shop, str(tmp_path / "src" / "billing" / "x.py")) is None


def test_the_agents_own_node_never_counts_against_it(env, shop, bob_holds_billing):
    hook(env, shop, "SessionStart", {"CT_PLAN": "p", "CT_NODE": "docs"})
    assert write(env, shop, str(shop / "docs" / "guide.md"), {"CT_RESERVATIONS": "deny"}) is None


def test_a_fresh_copy_answers_without_asking_the_tower(env, shop, bob, bob_holds_billing):
    hook(env, shop, "SessionStart")
    write(env, shop, str(shop / "README.md"))  # the copy is made
    append_event("bobs", "session_close", {}, user=bob)  # the tower would now say free
    said = write(env, shop, str(shop / "src" / "billing" / "x.py"))
    assert "reserved by bob" in said["hookSpecificOutput"]["additionalContext"]


def test_a_tower_away_lets_the_write_through(tmp_path, shop, token, bob_holds_billing):
    away = ct_env(tmp_path / "home2", "http://127.0.0.1:9", token)
    deny = {"CT_RESERVATIONS": "deny"}
    assert write(away, shop, str(shop / "src" / "billing" / "x.py"), deny) is None


def test_the_written_paths_go_with_the_next_heartbeat(env, shop):
    hook(env, shop, "SessionStart")
    for name in ("a.py", "b.py"):
        hook(
            env,
            shop,
            "PostToolUse",
            tool_name="Write",
            tool_input={"file_path": str(shop / "src" / name)},
        )
    reported = list(
        Event.objects.filter(session=SESSION, type=PROGRESS, paths__isnull=False).values_list(
            "paths", flat=True
        )
    )
    assert [json.loads(paths) for paths in reported] == [["src/a.py"]]  # then throttled


def test_ct_reservations_lists_who_holds_what_in_this_checkouts_repo(env, shop, bob_holds_billing):
    done = run_ct(env, "reservations", cwd=shop)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "p/billing (bobs, bob): src/billing"
    asked = run_ct(env, "reservations", "--repo", "acme/shop", "--path", "docs/x.md")
    assert asked.stdout.strip() == "nothing reserved in acme/shop"


def test_a_refusal_names_the_agent_that_holds_the_path(env, shop, bob):
    real_agents.bob_holds_billing(bob, agent="codex 0.169.0")
    hook(env, shop, "SessionStart")
    deny = {"CT_RESERVATIONS": "deny"}
    said = write(env, shop, str(shop / "src" / "billing" / "ledger.py"), deny)
    assert (
        "reserved by bob's session bobs (Codex, node billing of plan p)"
        in said["hookSpecificOutput"]["permissionDecisionReason"]
    )
