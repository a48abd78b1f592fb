"""What the tests of `ct dispatch` share: a stand-in agent (a Python script that reads
its prompt, commits a file and exits as told by `AGENT_MODE`), a plan to run, the
dispatcher run to its end or in the background, and ways to watch processes and
worktrees."""

import subprocess
import time
from pathlib import Path

from sessions.domain.vocabulary import PLAN_CREATE
from sessions.rules.append import append_event
from tests.support.ct_tools import CT, run_ct
from tests.support.git_repo import git

AGENT = """
import os, pathlib, subprocess, sys, time
prompt = sys.stdin.read()
session = os.environ["CT_SESSION"]
# Its pid, written whole before it is named: a test never reads a file half written.
writing = pathlib.Path(os.environ["CT_PIDS"], "." + session)
writing.write_text(str(os.getpid()))
writing.rename(writing.with_name(session))
mode = os.environ.get("AGENT_MODE", "work")
def when(name):  # waits for the file the environment names, if it names one
    while os.environ.get(name) and not pathlib.Path(os.environ[name]).exists():
        time.sleep(0.1)
if mode == "sleep":
    time.sleep(600)
when("AGENT_WORKS_WHEN")
if mode == "ask" and "they answered:" not in prompt:
    subprocess.run([os.environ["CT_BIN"], "block", "Which database?"], check=True)
    when("AGENT_ENDS_WHEN")  # ends later, when told, with no tool call
    if not os.environ.get("AGENT_WAITS"):
        sys.exit(0)
    subprocess.run([os.environ["CT_BIN"], "wait", "--until", "unblocked"], check=True)
name = session + ".txt"
pathlib.Path(name).write_text(prompt)
subprocess.run(["git", "add", name], check=True)
subprocess.run(["git", "commit", "-q", "-m", "work of " + session], check=True)
print("did the work on " + os.environ["CT_SESSION"], flush=True)
if mode == "linger":  # its work committed, it goes on until it is ended
    time.sleep(600)
sys.exit(3 if mode == "fail" else 0)
"""
IDENTITY = {
    "GIT_AUTHOR_NAME": "agent",
    "GIT_AUTHOR_EMAIL": "agent@example.com",
    "GIT_COMMITTER_NAME": "agent",
    "GIT_COMMITTER_EMAIL": "agent@example.com",
}


def make_plan(alice, nodes, plan_id="p"):
    append_event(plan_id, PLAN_CREATE, {"title": "Ship", "nodes": nodes}, user=alice)
    return plan_id


CHAIN = [
    {"key": "a", "title": "Schema", "brief": "Add the table."},
    {"key": "b", "title": "API", "needs": ["a"]},
]


def dispatch(env, repo, agent, *flags, mode="work", timeout=90):
    return run_ct(
        {**env, "AGENT_MODE": mode},
        "dispatch", "p", "--repo", str(repo), *flags, "--", *agent,
        timeout=timeout,
    )  # fmt: skip


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie waiting for its parent does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0]
    except OSError:
        return False
    return state != "Z"


def agent_pids(env) -> list[int]:
    named = [path for path in Path(env["CT_PIDS"]).iterdir() if not path.name.startswith(".")]
    return [int(path.read_text()) for path in named]


def started_agent(env) -> int:
    """Once the one dispatched agent has started: its pid."""
    assert wait_for(lambda: agent_pids(env)), "the agent never started"
    [pid] = agent_pids(env)
    return pid


def worktrees(repo) -> list[str]:
    listed = git(repo, "worktree", "list", "--porcelain").splitlines()
    return [line for line in listed if line.startswith("worktree ")]


def wait_for(condition, seconds=30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def background(env, repo, agent, mode="sleep"):
    args = [CT, "dispatch", "p", "--repo", str(repo), "--once", "--", *agent]
    return subprocess.Popen(
        args, env={**env, "AGENT_MODE": mode}, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
