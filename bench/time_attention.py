"""Benchmark: time and attention (issue 11).

    python bench/time_attention.py [sqlite] [postgresql]

1. The board at 1,000 open sessions of 20 events, live and as of a moment after every
   event (the same cards): server time through Django, median and range of 3 runs of 9.
2. Flow metrics over 100,000 sessions of 6 events spread over 14 days (most closed, by
   every outcome): `flow_model.metrics` for that window, the first call of a fresh process
   (cold) and the next two.
"""

import statistics
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from common import T0, report, reset_database, run_per_engine, seed, setup_django, timed

RUNS = 3
SESSIONS = 100_000


def spread(values):
    return f"{statistics.median(values):.0f} ms ({min(values):.0f}–{max(values):.0f})"


def boards(engine):
    from django.contrib.auth.models import User
    from django.test import Client

    seed(1000)
    viewer = User.objects.create_user("viewer")
    client = Client()
    client.force_login(viewer)
    at = (T0 + timedelta(days=60)).strftime("%Y-%m-%dT%H:%M:%S")

    def get(path):
        assert client.get(path).status_code == 200

    from django.utils import timezone

    from sessions.readmodels import board as board_model
    from sessions.readmodels import session_views

    finds_overdue = board_model.needing_attention

    def without_strip(path):
        # The same page with the strip's work left out: nothing found overdue.
        board_model.needing_attention = lambda *given: []
        try:
            get(path)
        finally:
            board_model.needing_attention = finds_overdue

    live, bare, as_of = [], [], []
    for _ in range(RUNS):  # interleaved, so drift hits all three alike
        live.append(timed(lambda: get("/"), repeat=9)[0])
        bare.append(timed(lambda: without_strip("/"), repeat=9)[0])
        as_of.append(timed(lambda: get(f"/?at={at}"), repeat=9)[0])
    now = timezone.now()
    rows = board_model.board_rows(None, None, now - timedelta(hours=24))
    overdue = len(finds_overdue(rows, now, session_views.thresholds()))
    report(
        f"The board at 1,000 open sessions ({overdue} overdue), live, without the Needs"
        f" attention strip's work, and as of a moment ({engine})",
        [
            (
                engine,
                spread(live),
                spread(bare),
                f"{statistics.median(live) / statistics.median(bare) - 1:+.0%}",
                spread(as_of),
                f"{statistics.median(as_of) / statistics.median(live):.2f}",
            )
        ],
        [
            "database",
            "live board",
            "without the strip",
            "strip adds",
            "as-of board",
            "as-of ÷ live",
        ],
    )


def seed_metrics():
    """100,000 sessions of 6 events over 14 days: start, block, unblock, review, then a
    close (done, failed or abandoned), or still in review for one in ten."""
    from common import settle_after_bulk_load

    from sessions.models import Event

    outcomes = ["done", "done", "done", "failed", "abandoned"]
    batch = []
    for n in range(SESSIONS):
        start = T0 + timedelta(seconds=n * 12)  # 100,000 × 12 s ≈ 14 days
        session = f"m{n}"
        steps = [
            ("session_start", {"title": f"Work {n}"}),
            ("session_block", {"reason": "waiting"}),
            ("session_unblock", {}),
            ("session_review", {"note": "PR up"}),
        ]
        if n % 10:
            steps.append(("session_close", {"outcome": outcomes[n % 5]}))
        for seq, (kind, fields) in enumerate(steps, start=1):
            moment = start + timedelta(minutes=7 * seq * (1 + n % 3))
            batch.append(
                Event(session=session, seq=seq, type=kind, timestamp=moment, actor="a", **fields)
            )
        if len(batch) >= 50_000:
            Event.objects.bulk_create(batch, batch_size=5000)
            batch = []
    Event.objects.bulk_create(batch, batch_size=5000)
    settle_after_bulk_load()


def metrics_timing():
    """Run in a fresh process: the first call is cold."""
    from sessions.readmodels import flow as flow_model

    since, until = T0, T0 + timedelta(days=15)
    samples = []
    for _ in range(3):
        begin = time.perf_counter()
        found = flow_model.metrics(since, until)
        samples.append((time.perf_counter() - begin) * 1000)
    closed = sum(sum(day.values()) for day in found["throughput"].values())
    assert closed == SESSIONS * 9 // 10, closed
    print(" ".join(f"{ms:.0f}" for ms in samples))


def metrics(engine):
    from django.core.management import call_command
    from django.db import connections

    connections.close_all()  # the board's database is dropped under this process
    reset_database(engine)
    call_command("migrate", verbosity=0)
    begin = time.perf_counter()
    seed_metrics()
    seeded = time.perf_counter() - begin
    rows = []
    for _ in range(RUNS):
        out = subprocess.run(
            [sys.executable, __file__, engine, "--metrics-only"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parent,
        ).stdout.split()
        rows.append([float(ms) for ms in out[-3:]])
    cold = [row[0] for row in rows]
    warm = [ms for row in rows for ms in row[1:]]
    report(
        f"Flow metrics over {SESSIONS:,} sessions × 6 events, a 15-day window ({engine})",
        [(engine, spread(cold), spread(warm), f"{seeded:.0f} s")],
        ["database", "cold (first call of a process)", "warm", "seeding"],
    )


def main(engine):
    if "--metrics-only" in sys.argv:
        setup_django(engine, fresh=False)
        metrics_timing()
        return
    setup_django(engine)
    boards(engine)
    metrics(engine)


if __name__ == "__main__":
    if "--metrics-only" in sys.argv:
        main(next(arg for arg in sys.argv[1:] if arg in ("sqlite", "postgresql")))
    else:
        run_per_engine(__file__, main)
