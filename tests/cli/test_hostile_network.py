"""The agent's client under a network that misbehaves (docs/rules.md, "The agent's side"):
real `ct` processes, real socket servers playing the bad tower, Claude Code's hook
payloads; nothing stalls past its deadline, nothing is lost, nothing is set aside but
the tower's own refusal."""

import json
import os
import stat
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from sessions.domain.vocabulary import START
from sessions.models import Event
from tests.conftest import free_port
from tests.support.bad_towers import BadTower, Relay
from tests.support.ct_tools import CT, ct_env, flushers, hook_payload, run_ct, run_hook
from tests.support.http import http_request

pytestmark = pytest.mark.django_db(transaction=True)

SID = "7a0c2d3e-0000-4000-8000-00000000beef"
SESSION = f"cc-{SID}"
HOOK_DEADLINE_SECONDS = 2.0


@pytest.fixture
def env(tmp_path, live_server, token):
    return ct_env(tmp_path / "home", live_server.url, token)


def at(env, url):
    return {**env, "CT_URL": url}


def hook(env, repo, event, **fields):
    done = run_hook(env, hook_payload(event, SID, repo, **fields))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def state(env):
    return f"{env['XDG_STATE_HOME']}/control-tower"


def lines_of(path):
    try:
        with open(path, "rb") as found:
            return [json.loads(line) for line in found if line.strip()]
    except FileNotFoundError:
        return []


def spooled(env):
    return lines_of(f"{state(env)}/spool.jsonl")


def set_aside(env):
    return lines_of(f"{state(env)}/refused/spool.jsonl")


def types_of(session=SESSION):
    return list(
        Event.objects.filter(session=session).order_by("seq").values_list("type", flat=True)
    )


def timed(run):
    began = time.monotonic()
    result = run()
    return result, time.monotonic() - began


# A deadline over the whole exchange ---------------------------------------------------


def test_a_hook_against_a_tower_that_dribbles_bytes_ends_within_its_deadline(env, repo):
    with BadTower("dribbling") as tower:
        _, took = timed(lambda: hook(at(env, tower.url), repo, "SessionStart"))
        assert tower.connections >= 1
    assert took < HOOK_DEADLINE_SECONDS
    assert [line["body"]["id"] for line in spooled(env)] == [SESSION]


def test_ct_progress_against_a_dribbling_tower_gives_up_at_its_timeout_with_exit_4(env):
    with BadTower("dribbling") as tower:
        done, took = timed(lambda: run_ct(at(env, tower.url), "progress", "--session", "s1"))
    assert done.returncode == 4
    assert "no whole answer within" in done.stderr
    assert took < 12  # the request's 10 s, the interpreter's start included


def test_a_404_page_that_is_not_the_towers_keeps_the_event_in_the_spool(env, repo):
    with BadTower("proxy_404") as proxy:
        hook(at(env, proxy.url), repo, "SessionStart")
        assert proxy.connections >= 1
    assert [line["body"]["id"] for line in spooled(env)] == [SESSION]
    assert set_aside(env) == []
    hook(env, repo, "Stop")  # the tower itself again: the start goes first
    assert types_of() == [START, "session_block"]


def test_only_the_towers_own_refusal_sets_an_event_aside(env, repo):
    hook(env, repo, "SessionStart")
    hook(env, repo, "SessionEnd")
    hook(env, repo, "Stop")  # a block on a closed session: the tower refuses it (409)
    [refused] = set_aside(env)
    assert refused["refused"]["code"] == "transition_not_allowed"


def test_ct_against_a_proxys_404_page_says_the_tower_is_unreachable(env):
    with BadTower("proxy_404") as proxy:
        done = run_ct(at(env, proxy.url), "show", "s1")
    assert done.returncode == 4
    assert "HTTP 404, not the tower's answer" in done.stderr


# The spool ----------------------------------------------------------------------------


def spool_path(env):
    path = f"{state(env)}/spool.jsonl"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


@pytest.mark.parametrize(
    "poison",
    ["{}", "[1]", '"x"', '{"method":"POST","path":"/sessions","body":null,"key":"k"}', "not json"],
)
def test_a_poison_line_at_the_spools_head_is_set_aside_and_the_rest_is_sent(env, repo, poison):
    with open(spool_path(env), "w") as spool:
        spool.write(poison + "\n")
    hook(env, repo, "SessionStart")
    assert types_of() == [START]
    assert spooled(env) == []
    [aside] = set_aside(env)
    assert aside["line"] == poison and aside["refused"]["code"] == "not_an_entry"


def test_an_entry_after_a_line_cut_by_a_crash_starts_a_line_of_its_own(env, repo, live_server):
    with open(spool_path(env), "w") as spool:
        spool.write('{"method":"POST","path":"/sessi')  # a crash mid-write: no newline
    away = at(env, f"http://127.0.0.1:{free_port()}")
    hook(away, repo, "SessionStart")
    assert [line["body"]["id"] for line in spooled(env)] == [SESSION]  # whole, not swallowed
    hook(env, repo, "Stop")
    assert types_of() == [START, "session_block"]
    assert [aside["line"] for aside in set_aside(env)] == ['{"method":"POST","path":"/sessi']


def test_with_the_state_folder_unwritable_the_hooks_still_reach_the_tower(
    tmp_path, live_server, token, repo
):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    # Its state folder lies under a file: no user, root included, can make it.
    env = ct_env(tmp_path / "home", live_server.url, token, XDG_STATE_HOME=str(blocker / "state"))
    hook(env, repo, "SessionStart")
    hook(env, repo, "Stop")
    assert types_of() == [START, "session_block"]


def test_the_state_folder_and_its_own_folders_are_for_their_user_only(env, repo):
    hook(env, repo, "SessionStart")
    for folder in (state(env), f"{state(env)}/claude-code", f"{state(env)}/sessions"):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder


def test_a_state_folder_left_open_by_an_older_ct_is_closed_again(env, repo):
    os.makedirs(f"{state(env)}/claude-code", mode=0o755)
    os.chmod(state(env), 0o755)
    hook(env, repo, "SessionStart")
    assert stat.S_IMODE(os.stat(state(env)).st_mode) == 0o700


# What a hook sends is what the tower takes ---------------------------------------------


@pytest.mark.parametrize(
    ("answer", "arrives"),
    [
        ("👨‍💻 yes, go ahead", "👨‍💻 yes, go ahead"),
        ("yes\x00 go", "yes go"),
        ("\u202eog ,sey", "og ,sey"),
        ("\x1b[31myes\x1b[0m, go", "yes, go"),
    ],
)
def test_a_persons_answer_reaches_the_tower_less_what_it_refuses(
    env, repo, live_server, token, answer, arrives
):
    hook(env, repo, "SessionStart")
    hook(env, repo, "Stop")
    hook(env, repo, "UserPromptSubmit", prompt=answer)
    found = http_request(live_server.url, "GET", f"/api/sessions/{SESSION}", token=token).json()
    assert (found["status"], found["next_action"]) == ("active", arrives)
    assert set_aside(env) == []


# Nothing left behind ------------------------------------------------------------------


def test_a_hook_that_leaves_events_spooled_starts_one_flusher_that_sends_them_and_exits(
    env, repo, live_server
):
    port = free_port()
    away = at(env, f"http://127.0.0.1:{port}")
    hook(away, repo, "SessionStart")
    hook(away, repo, "Stop")
    assert len(spooled(env)) == 2
    mine = env["XDG_STATE_HOME"]
    assert len(flushers(mine)) == 1  # one per user, however many hooks spooled
    with Relay(port, urlsplit(live_server.url).port):  # the tower is back
        deadline = time.monotonic() + 40  # its tries: after 2, 6, 14 and 30 s
        while (types_of() != [START, "session_block"] or flushers(mine)) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.2)
    log = Path(f"{state(env)}/hook.log")
    assert types_of() == [START, "session_block"], log.read_text() if log.exists() else ""
    assert spooled(env) == []
    assert flushers(mine) == []  # it exits once the spool is empty


def test_every_ct_command_sends_the_spool_first(env, repo):
    hook(at(env, f"http://127.0.0.1:{free_port()}"), repo, "SessionStart")
    assert run_ct(env, "ls").returncode == 0
    assert types_of() == [START]
    assert spooled(env) == []


# ct wait ------------------------------------------------------------------------------


def test_wait_rides_out_a_tower_that_goes_away_and_comes_back(env, live_server, token):
    assert run_ct(env, "start", "Ship it", "--id", "s1").returncode == 0
    assert run_ct(env, "block", "which database?", "--session", "s1").returncode == 0
    port = free_port()
    waiting = subprocess.Popen(
        [CT, "wait", "s1", "--until", "unblocked", "--interval", "0.2", "--timeout", "30"],
        env=at(env, f"http://127.0.0.1:{port}"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)  # it polls a tower that is not there
    http_request(
        live_server.url,
        "POST",
        "/api/sessions/s1/events",
        {"type": "session_unblock", "note": "PostgreSQL"},
        token=token,
    )
    with Relay(port, urlsplit(live_server.url).port):
        out, err = waiting.communicate(timeout=30)
    assert waiting.returncode == 0, err
    assert "PostgreSQL" in out


def test_wait_against_a_blackholed_tower_keeps_to_its_timeout(env):
    with BadTower("silent") as silent:
        done, took = timed(
            lambda: run_ct(at(env, silent.url), "wait", "s1", "--until", "closed", "--timeout", "3")
        )
    assert done.returncode == 5
    assert took < 5


# Small things -------------------------------------------------------------------------


def test_ls_into_a_closed_pipe_prints_no_traceback(env):
    for n in range(3):
        assert run_ct(env, "start", f"Task {n}").returncode == 0
    reading, writing = os.pipe()
    os.close(reading)  # the reader (`head`) is gone before ct writes
    done = subprocess.run(
        [CT, "ls"], env=env, stdout=writing, stderr=subprocess.PIPE, text=True, timeout=30
    )
    os.close(writing)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    assert done.returncode == 0


def test_hooks_install_goes_into_the_personal_settings_by_default(env, tmp_path):
    done = subprocess.run(
        [CT, "hooks", "claude-code", "--install"], env=env, cwd=tmp_path, capture_output=True
    )
    assert done.returncode == 0
    assert not (tmp_path / ".claude" / "settings.json").exists()
    installed = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
    command = installed["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert command == f"{os.path.realpath(CT)} hook claude-code"


def test_hooks_install_shared_writes_the_committed_settings_with_ct_from_the_path(env, tmp_path):
    done = subprocess.run(
        [CT, "hooks", "claude-code", "--install", "--shared"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
    )
    assert done.returncode == 0
    installed = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert {
        hook["command"]
        for groups in installed["hooks"].values()
        for group in groups
        for hook in group["hooks"]
    } == {"ct hook claude-code"}
