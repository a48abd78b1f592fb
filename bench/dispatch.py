"""Benchmark: `ct dispatch` (issue 53).

    python bench/dispatch.py [sqlite] [postgresql]

Against gunicorn on loopback, in a real git repository, with a stand-in agent that exits
at once (`true`), BENCH_ROUNDS runs of each:
- the dispatcher's own cost per node (claim, worktree, launch, close, clean-up): a plan of
  N independent nodes run by one slot with `--once`, wall time / N, for N in
  BENCH_SIZES (default 10, 50, 200). Goal: ≤ 0.5 s a node, and flat in N;
- readiness to claim on a chain of 30 nodes: from the close that makes a node ready to
  its new session's start (the events' own times), p50 and p95. Goal: p95 ≤ 1 s.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agents import tower
from append_http import PORT
from common import report, run_per_engine

from tests.support.ct_tools import CT
from tests.support.ct_tools import ct_env as tests_ct_env
from tests.support.git_repo import checkout, commit

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SIZES = [int(n) for n in os.environ.get("BENCH_SIZES", "10,50,200").split(",")]
CHAIN = 30


def plan(owner, plan_id: str, nodes: int, chain: bool) -> None:
    from sessions.domain.vocabulary import PLAN_CREATE
    from sessions.rules.append import append_event

    given = [
        {"key": f"n{i}", "title": f"Node {i}", **({"needs": [f"n{i - 1}"]} if chain and i else {})}
        for i in range(nodes)
    ]
    append_event(plan_id, PLAN_CREATE, {"title": plan_id, "nodes": given}, user=owner)


def run(token: str, plan_id: str) -> float:
    """`ct dispatch PLAN --once -- true` in a new repository: its wall time in seconds."""
    home = Path(tempfile.mkdtemp(prefix="ct-dispatch-"))
    repo = checkout(home / "repo", branch="main")
    commit(repo)
    env = tests_ct_env(home / "home", f"http://127.0.0.1:{PORT}", token)
    began = time.perf_counter()
    done = subprocess.run(
        [CT, "dispatch", plan_id, "--repo", str(repo), "--once", "--", "true"],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    took = time.perf_counter() - began
    assert done.returncode == 0, done.stdout + done.stderr
    return took


def readiness(plan_id: str) -> list[float]:
    """Seconds from each node's close to the next node's start, along the chain."""
    from sessions.domain.vocabulary import CLOSE, START
    from sessions.models import Event

    starts = dict(Event.objects.filter(type=START, plan=plan_id).values_list("node", "session"))
    moments = {}
    for node, session in starts.items():
        events = Event.objects.filter(session=session, type__in=(START, CLOSE)).order_by("seq")
        moments[node] = [event.timestamp for event in events]
    return [
        (moments[f"n{i}"][0] - moments[f"n{i - 1}"][-1]).total_seconds() for i in range(1, CHAIN)
    ]


def main(engine: str) -> None:
    with tower(engine) as (user, token):
        rows = []
        for size in SIZES:
            per_node = []
            for round_ in range(ROUNDS):
                plan_id = f"fan-{size}-{round_}"
                plan(user, plan_id, size, chain=False)
                per_node.append(run(token, plan_id) / size * 1000)
            rows.append(
                (
                    f"{size} independent nodes, one slot: per node",
                    f"{statistics.median(per_node):.0f}",
                    f"{min(per_node):.0f}–{max(per_node):.0f}",
                    "≤ 500",
                )
            )
            print(f"  {size}: {[round(n) for n in per_node]}", flush=True)
        waits = []
        for round_ in range(ROUNDS):
            plan_id = f"chain-{round_}"
            plan(user, plan_id, CHAIN, chain=True)
            run(token, plan_id)
            waits += readiness(plan_id)
        waits.sort()
        p50, p95 = statistics.median(waits), waits[int(len(waits) * 0.95) - 1]
        rows.append(
            (
                f"readiness to claim along a {CHAIN}-node chain: p50 / p95",
                f"{p50 * 1000:.0f} / {p95 * 1000:.0f}",
                f"{waits[0] * 1000:.0f}–{waits[-1] * 1000:.0f}",
                "p95 ≤ 1,000",
            )
        )
        report(
            f"ct dispatch with an agent that exits at once, {ROUNDS} runs ({engine}), ms",
            rows,
            ["figure", "median", "range", "goal"],
        )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    run_per_engine(__file__, main)
