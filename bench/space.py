"""Benchmark: space (issue 39).

    python bench/space.py [sqlite] [postgresql]

Three figures, each against its goal:
- `PreToolUse` for a write (`ct hook claude-code`, a new process each run as Claude Code
  starts it, against gunicorn on loopback), the repo's reservations copy fresh, with 200
  running nodes of 20 patterns each in the repo: p50 and p95 over RUNS runs, beside the
  same hook for a tool that writes nothing (today's PreToolUse) and `python -c pass` in
  the same run. The goal: a write's check adds ≤ 10 ms, and sends no request while the
  copy is fresh (tests/cli/test_space_hooks.py shows it answers with the tower's answer
  changed: from the copy).
- A 500-node plan with 20 patterns per node and 100 running nodes: the plan view's data
  (`plan_views.plan_view`), ≤ 150 ms.
- `GET /api/reservations?repo=R&path=P` over HTTP with 1,000 running nodes: ≤ 20 ms.
"""

import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agents import ct_env, tower
from append_http import PORT
from common import percentile, report, run_per_engine, timed

from tests.support.ct_tools import CT, hook_payload
from tests.support.git_repo import checkout, commit

RUNS = int(os.environ.get("BENCH_RUNS", "200"))
REPO = "acme/shop"


def patterns(n: int) -> list[str]:
    """20 patterns of node `n`: folders, globs and a `**`."""
    return [f"svc{n}/part{k}" for k in range(15)] + [
        f"svc{n}/*.py",
        f"docs/svc{n}/*.md",
        f"svc{n}/**/test_*.py",
        f"web/svc{n}/?.tsx",
        f"conf/svc{n}.toml",
    ]


def running_plan(plan_id: str, nodes: int, running: int, owner) -> None:
    """A plan on REPO of `nodes` nodes with 20 patterns each, `running` of them started."""
    from sessions.domain.vocabulary import PLAN_CREATE, START
    from sessions.rules.append import append_event

    given = [{"key": f"n{n}", "title": f"Node {n}", "paths": patterns(n)} for n in range(nodes)]
    fields = {"title": plan_id, "repo": REPO, "nodes": given, "lease": 10**6}
    append_event(plan_id, PLAN_CREATE, fields, user=owner)
    for n in range(running):
        append_event(f"{plan_id}-s{n}", START, {"plan": plan_id, "node": f"n{n}"}, user=owner)


def hook_times(token: str) -> list[tuple]:
    """Each kind of PreToolUse RUNS times, in ms, and the requests the writes sent."""
    home = Path(tempfile.mkdtemp(prefix="ct-space-"))
    repo = checkout(home / "shop")
    commit(repo)
    env = ct_env(home / "home", f"http://127.0.0.1:{PORT}", token)
    hook = [CT, "hook", "claude-code"]

    def run(event: str, **fields) -> float:
        given = json.dumps(hook_payload(event, "bench-space", repo, **fields))
        begin = time.perf_counter()
        subprocess.run(hook, env=env, input=given, capture_output=True, text=True, check=True)
        return (time.perf_counter() - begin) * 1000

    run("SessionStart")
    write = {"tool_name": "Edit", "tool_input": {"file_path": str(repo / "svc7/part3/a.py")}}
    run("PreToolUse", **write)  # the copy is made
    bare, other, writes = [], [], []
    for n in range(RUNS):
        if n % 25 == 0:
            run("PreToolUse", **write)  # keeps the copy fresh (outside the timing)
        begin = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append((time.perf_counter() - begin) * 1000)
        other.append(run("PreToolUse", tool_name="Bash", tool_input={"command": "ls"}))
        writes.append(run("PreToolUse", **write))
    return [
        ("`python -c pass`", bare),
        ("PreToolUse, a tool that writes nothing", other),
        ("PreToolUse, a write to a held path (copy fresh)", writes),
    ]


def reservation_times(token: str) -> tuple[float, float]:
    connection = http.client.HTTPConnection("127.0.0.1", PORT)
    headers = {"Authorization": f"Bearer {token}"}

    def ask() -> None:
        connection.request(
            "GET", f"/api/reservations?repo={REPO}&path=svc250/part3/a.py", headers=headers
        )
        answer = connection.getresponse()
        body = answer.read()
        assert answer.status == 200 and json.loads(body)["items"], body[:200]

    return timed(ask, repeat=50, warmup=5)


def main(engine: str) -> None:
    with tower(engine) as (user, token):
        running_plan("p200", 200, 200, user)
        rows = hook_times(token)
        report(
            f"PreToolUse with 200 reservations of 20 patterns in the repo, {RUNS} runs, ms"
            f" ({engine})",
            [
                (name, f"{statistics.median(t):.1f}", f"{percentile(t, 0.95):.1f}")
                for name, t in rows
            ],
            ["process", "p50", "p95"],
        )
        from sessions.readmodels import plan_views

        running_plan("p500", 500, 100, user)
        median, p90 = timed(lambda: plan_views.plan_view("p500"), repeat=15)
        running_plan("q500", 500, 500, user)
        running_plan("r500", 500, 300, user)  # 200 + 100 + 500 + 300 = 1,100 running
        asked = reservation_times(token)
        report(
            f"Space's reads ({engine}), ms",
            [
                (
                    "plan view's data, 500 nodes × 20 patterns, 100 running",
                    f"{median:.1f}",
                    f"{p90:.1f}",
                    "≤ 150",
                ),
                (
                    "GET /api/reservations?path=, 1,100 running nodes (HTTP)",
                    f"{asked[0]:.1f}",
                    f"{asked[1]:.1f}",
                    "≤ 20",
                ),
            ],
            ["read", "median", "p90", "goal"],
        )


if __name__ == "__main__":
    run_per_engine(__file__, main)
