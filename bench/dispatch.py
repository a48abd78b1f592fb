"""Benchmark: `ct dispatch` (issue 53).

    python bench/dispatch.py [sqlite] [postgresql]

Against gunicorn on loopback, in a real git repository, with a stand-in agent that exits
at once (`true`), BENCH_ROUNDS runs of each:
- the dispatcher's own cost per node (claim, worktree, launch, close, clean-up): a plan of
  N independent nodes run by one slot with `--once`, wall time / N, for N in
  BENCH_SIZES (default 10, 50, 200). Goal: ≤ 0.5 s a node, and flat in N;
- readiness to claim on a chain of 30 nodes: from the close that makes a node ready to
  its new session's start (the events' own times), p50 and p95. Goal: p95 ≤ 1 s;
- readiness after another worker's close: an idle dispatcher (waiting on the plan's feed)
  and 10 nodes, each after a node a person holds; each person's close (0.3–0.9 s apart,
  seeded, so that no polling interval keeps step with them), then the time to its
  follower's start;
- two dispatchers × 4 slots on a 200-node plan (20 chains of 10) whose agent sleeps
  BENCH_AGENT_SECONDS (default 0.5): wall time against the critical path's, and the
  nodes run twice (goal 0).
"""

import os
import random
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
GATES = 10
AGENT_SECONDS = float(os.environ.get("BENCH_AGENT_SECONDS", "0.5"))


def plan(owner, plan_id: str, nodes: int, chain: bool) -> None:
    from sessions.domain.vocabulary import PLAN_CREATE
    from sessions.rules.append import append_event

    given = [
        {"key": f"n{i}", "title": f"Node {i}", **({"needs": [f"n{i - 1}"]} if chain and i else {})}
        for i in range(nodes)
    ]
    append_event(plan_id, PLAN_CREATE, {"title": plan_id, "nodes": given}, user=owner)


def workspace(token: str) -> tuple[Path, dict]:
    """A new repository with one commit, and `ct`'s environment against the tower."""
    home = Path(tempfile.mkdtemp(prefix="ct-dispatch-"))
    repo = checkout(home / "repo", branch="main")
    commit(repo)
    return repo, tests_ct_env(home / "home", f"http://127.0.0.1:{PORT}", token)


def run(token: str, plan_id: str) -> float:
    """`ct dispatch PLAN --once -- true` in a new repository: its wall time in seconds."""
    repo, env = workspace(token)
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


def after_others(user, token: str, round_: int) -> list[float]:
    """Seconds from a person's close of a gate node to its follower's start, with the
    dispatcher idle on the plan's feed meanwhile."""
    from sessions.domain.vocabulary import CLOSE, PLAN_CREATE, START
    from sessions.models import Event
    from sessions.rules.append import append_event

    plan_id = f"gates-{round_}"
    nodes = [{"key": f"g{i}", "title": f"Gate {i}"} for i in range(GATES)]
    nodes += [{"key": f"w{i}", "title": f"Work {i}", "needs": [f"g{i}"]} for i in range(GATES)]
    append_event(plan_id, PLAN_CREATE, {"title": plan_id, "nodes": nodes}, user=user)
    for i in range(GATES):
        node = {"plan": plan_id, "node": f"g{i}"}
        append_event(f"{plan_id}-person-{i}", START, node, user=user)
    repo, env = workspace(token)
    args = [CT, "dispatch", plan_id, "--repo", str(repo), "--", "true"]
    dispatcher = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL)
    waits, gaps = [], random.Random(round_)
    try:
        time.sleep(2)  # idle: nothing ready
        for i in range(GATES):
            closed = append_event(f"{plan_id}-person-{i}", CLOSE, {}, user=user).event
            began = time.monotonic()
            while not Event.objects.filter(type=START, plan=plan_id, node=f"w{i}").exists():
                assert time.monotonic() - began < 30, f"w{i} never claimed"
                time.sleep(0.01)
            start = Event.objects.get(type=START, plan=plan_id, node=f"w{i}")
            waits.append((start.timestamp - closed.timestamp).total_seconds())
            time.sleep(gaps.uniform(0.3, 0.9))  # idle again, out of step with any tick
    finally:
        dispatcher.terminate()
        dispatcher.wait(30)
    return waits


def two_dispatchers(user, token: str, round_: int) -> tuple[float, int]:
    """Two dispatchers of 4 slots on 20 chains of 10 nodes: (wall seconds, nodes run
    more than once)."""
    from sessions.domain.vocabulary import PLAN_CREATE, START
    from sessions.models import Event
    from sessions.rules.append import append_event

    plan_id = f"two-{round_}"
    nodes = [
        {"key": f"c{c}n{i}", "title": f"{c}.{i}", **({"needs": [f"c{c}n{i - 1}"]} if i else {})}
        for c in range(20)
        for i in range(10)
    ]
    append_event(plan_id, PLAN_CREATE, {"title": plan_id, "nodes": nodes}, user=user)
    repo, env = workspace(token)
    args = [CT, "dispatch", plan_id, "--repo", str(repo), "--agents", "4", "--once", "--"]
    agent = ["sleep", f"{AGENT_SECONDS:g}"]
    began = time.perf_counter()
    both = [subprocess.Popen([*args, *agent], env=env, stdout=subprocess.DEVNULL) for _ in "ab"]
    for dispatcher in both:
        dispatcher.wait(1800)
    took = time.perf_counter() - began
    starts = list(Event.objects.filter(type=START, plan=plan_id).values_list("node", flat=True))
    return took, len(starts) - len(set(starts))


def p50_p95(values: list[float]) -> tuple[float, float]:
    values.sort()
    return statistics.median(values), values[int(len(values) * 0.95) - 1]


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
        p50, p95 = p50_p95(waits)
        rows.append(
            (
                f"readiness to claim along a {CHAIN}-node chain: p50 / p95",
                f"{p50 * 1000:.0f} / {p95 * 1000:.0f}",
                f"{waits[0] * 1000:.0f}–{waits[-1] * 1000:.0f}",
                "p95 ≤ 1,000",
            )
        )
        after = [wait for round_ in range(ROUNDS) for wait in after_others(user, token, round_)]
        p50, p95 = p50_p95(after)
        rows.append(
            (
                f"readiness after another's close, idle on the feed ({len(after)}): p50 / p95",
                f"{p50 * 1000:.0f} / {p95 * 1000:.0f}",
                f"{after[0] * 1000:.0f}–{after[-1] * 1000:.0f}",
                "p95 ≤ 1,000",
            )
        )
        pairs = [two_dispatchers(user, token, round_) for round_ in range(ROUNDS)]
        walls = [wall * 1000 for wall, _ in pairs]
        floor = max(10, 200 / 8) * AGENT_SECONDS * 1000  # the critical path, or 8 slots' share
        rows.append(
            (
                f"2 dispatchers × 4 slots, 200 nodes, agent {AGENT_SECONDS:g} s: wall"
                f" (nodes run twice: {sum(twice for _, twice in pairs)})",
                f"{statistics.median(walls):.0f}",
                f"{min(walls):.0f}–{max(walls):.0f}",
                f"floor {floor:.0f} (10-node critical path; 200 / 8 slots)",
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
