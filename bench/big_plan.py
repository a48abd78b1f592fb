"""Benchmark: a pattern-heavy plan (issue 52, break 3).

    python bench/big_plan.py [sqlite] [postgresql]

Two plans of 500 nodes with 50 path patterns each, 40 of them starting with `**`, and 10
nodes of each running: the red team's plan, where one view took 24.8 s and the list of
plans over a minute. Over HTTP against gunicorn on loopback, BENCH_ROUNDS runs of each
(median and range, ms; the goal is ≤ 150 ms each), after two untimed rounds of the reads
that warm each of gunicorn's workers (its imports, the plans' graphs kept per process):
- `GET /api/plans/<id>`: the plan view, with every ready node's overlaps;
- `GET /api/plans`: the list (both plans);
- `POST /api/plans/<id>/claim`: a claim (each run takes another ready node);
- `GET /api/reservations?repo=R&path=P`: who holds a path.

To measure an older commit, copy this file into a worktree of it and run it there.
"""

import http.client
import json
import os
import statistics
import time

from agents import tower
from append_http import PORT
from common import report, run_per_engine

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
REPO = "acme/monorepo"
PLANS, NODES, RUNNING = ("big-a", "big-b"), 500, 10


def patterns(n: int) -> list[str]:
    """Node `n`'s 50 patterns: 40 with an empty literal prefix, 10 folders."""
    anywhere = [f"**/mod{n}_{k}/*.py" for k in range(30)] + [f"**/*{n}_{k}*.ts" for k in range(10)]
    return anywhere + [f"src/svc{n}/part{k}" for k in range(10)]


def seed(owner) -> None:
    from sessions.domain.vocabulary import PLAN_CREATE, START
    from sessions.rules.append import append_event

    for plan in PLANS:
        nodes = [{"key": f"n{n}", "title": f"Node {n}", "paths": patterns(n)} for n in range(NODES)]
        fields = {"title": plan, "repo": REPO, "nodes": nodes, "lease": 10**6}
        append_event(plan, PLAN_CREATE, fields, user=owner)
        for n in range(RUNNING):
            append_event(f"{plan}-s{n}", START, {"plan": plan, "node": f"n{n}"}, user=owner)


def request(token: str, method: str, path: str, expected: int) -> float:
    """One request on a new connection: its milliseconds."""
    connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=600)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    began = time.perf_counter()
    connection.request(method, path, body=b"{}" if method == "POST" else None, headers=headers)
    answer = connection.getresponse()
    body = answer.read()
    took = (time.perf_counter() - began) * 1000
    connection.close()
    assert answer.status == expected, (answer.status, body[:300])
    if path == "/api/plans":
        print(f"  (the list's answer: {len(body):,} bytes)", flush=True)
    json.loads(body)
    return took


READS = [
    ("GET /api/plans/<id> (the view, with overlaps)", "GET", f"/api/plans/{PLANS[0]}", 200),
    ("GET /api/plans (the list of both)", "GET", "/api/plans", 200),
    ("POST /api/plans/<id>/claim", "POST", f"/api/plans/{PLANS[0]}/claim", 201),
    (
        "GET /api/reservations?repo=R&path=P",
        "GET",
        f"/api/reservations?repo={REPO}&path=lib/mod3_7/deep/x/mod3_7/a.py",
        200,
    ),
]


def main(engine: str) -> None:
    with tower(engine) as (user, token):
        seed(user)
        for _ in range(2):
            for _, method, path, expected in READS:
                if method == "GET":
                    request(token, method, path, expected)
        rows = []
        for name, method, path, expected in READS:
            samples = [request(token, method, path, expected) for _ in range(ROUNDS)]
            rows.append(
                (
                    name,
                    f"{statistics.median(samples):.1f}",
                    f"{min(samples):.1f}–{max(samples):.1f}",
                    "≤ 150",
                )
            )
            print(f"  {name}: {[round(s, 1) for s in samples]}", flush=True)
        report(
            f"A plan of {NODES} nodes × 50 patterns, {RUNNING} running, {ROUNDS} runs ({engine}),"
            " ms",
            rows,
            ["request", "median", "range", "goal"],
        )


if __name__ == "__main__":
    run_per_engine(__file__, main)
