"""Benchmark: a GitHub delivery that matches a session (issue 37).

    python bench/forge.py [sqlite] [postgresql]

1,000 open sessions (20 events each, every one on a branch of its own of acme/shop, at a
head commit) and 10,000 closed ones behind them. Server time, through Django's full
request handling, of `POST /integrations/github` with a signed `pull_request`
(`synchronize`: the head moved) for one session's branch, each run a new delivery and a
new head: median and p95 of RUNS. The goal: p95 ≤ 30 ms on both databases.
"""

import hashlib
import hmac
import json
import os
import statistics
import sys
import time
import uuid

from common import T0, percentile, report, run_per_engine, seed, setup_django

RUNS = int(os.environ.get("BENCH_RUNS", "60"))
OPEN, CLOSED = 1000, 10_000
SECRET = "bench-secret"


def main(engine):
    setup_django(engine)
    from datetime import timedelta

    from django.conf import settings
    from django.test import Client

    from sessions import store
    from sessions.domain.records import EventRecord
    from sessions.domain.vocabulary import WORK

    seed(OPEN, CLOSED)
    reports = [
        EventRecord(
            f"o{n}",
            21,
            WORK,
            T0 + timedelta(days=40),
            "bench",
            repo="acme/shop",
            branch=f"task-{n}",
            commit=f"{n:040x}",
        )
        for n in range(OPEN)
    ]
    with store.holding("bench-work"):
        store.insert_many(reports)
    settings.GITHUB_WEBHOOK_SECRET = SECRET
    client = Client()
    samples = []
    for run in range(RUNS):
        n = run * 7 % OPEN
        payload = {
            "action": "synchronize",
            "number": 100 + n,
            "pull_request": {
                "number": 100 + n,
                "html_url": f"https://github.com/acme/shop/pull/{100 + n}",
                "state": "open",
                "merged": False,
                "head": {
                    "ref": f"task-{n}",
                    "sha": f"{run + 1:040x}",
                    "repo": {"full_name": "acme/shop"},
                },
            },
            "repository": {"full_name": "acme/shop"},
        }
        body = json.dumps(payload).encode()
        signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        began = time.perf_counter()
        answer = client.post(
            "/integrations/github",
            body,
            content_type="application/json",
            HTTP_X_GITHUB_EVENT="pull_request",
            HTTP_X_GITHUB_DELIVERY=str(uuid.uuid4()),
            HTTP_X_HUB_SIGNATURE_256=signature,
        )
        samples.append((time.perf_counter() - began) * 1000)
        assert answer.status_code == 200 and answer.json()["appended"] == [f"o{n}"], answer.content
    report(
        f"A matched pull_request delivery, {OPEN:,} open and {CLOSED:,} closed sessions",
        [[engine, RUNS, f"{statistics.median(samples):.1f}", f"{percentile(samples, 0.95):.1f}"]],
        ["engine", "runs", "p50 ms", "p95 ms"],
    )


if __name__ == "__main__":
    run_per_engine(__file__, main)
    sys.exit(0)
