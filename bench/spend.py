"""Benchmark: what spend costs the plan view and the metrics (issue 38).

    python bench/spend.py [sqlite] [postgresql]

1. The 500-node plan of bench/plans.py (5,000 node sessions of 6 events): the plan view's
   data (`plan_views.plan_view`), as it is, then after every session reported usage for
   two models (10,000 `session_usage` events): each node's and the plan's usage are
   summed in the view. The goal: ≤ 1.1× the view without usage.
2. The metrics over a window holding 100,000 closed sessions of 5 events
   (`flow.window_metrics`, what the page and the API compute), as they are, then after
   every session reported usage once (100,000 more events). The goal: ≤ 1.1×.
Medians of RUNS runs of 9 (range).
"""

import os
import sys
import time
from datetime import timedelta

from common import T0, report, run_per_engine, seed, settle_after_bulk_load, setup_django, timed
from plans import big_plan, spread

RUNS = int(os.environ.get("BENCH_RUNS", "3"))
PARTS = os.environ.get("BENCH_PARTS", "plan,metrics").split(",")  # one of them, or both
SESSIONS = int(os.environ.get("BENCH_SESSIONS", "100000"))


def usage_rows(sessions, seq, moments, model):
    """One `session_usage` per session, as the stream's `seq`-th event, at its moment."""
    from sessions.domain.vocabulary import USAGE
    from sessions.models import Event

    counts = {"input_tokens": 1200, "output_tokens": 300, "cache_read_tokens": 40_000}
    return [
        Event(
            session=session,
            seq=seq,
            type=USAGE,
            timestamp=moment,
            actor="agent",
            usage_model=model,
            cache_write_tokens=2_000,
            **counts,
        )
        for session, moment in zip(sessions, moments, strict=True)
    ]


def bulk(rows):
    from sessions.models import Event

    for start in range(0, len(rows), 5000):
        Event.objects.bulk_create(rows[start : start + 5000])


def plan_view_with_usage(engine):
    from sessions.models import Event
    from sessions.readmodels import kept, plan_views

    big_plan("big", 6)
    settle_after_bulk_load()
    sessions = list(
        Event.objects.filter(type="session_start", plan="big").values_list("session", flat=True)
    )

    def data():
        return [timed(lambda: plan_views.plan_view("big"), repeat=9)[0] for _ in range(RUNS)]

    before = data()
    later = [T0 + timedelta(days=30)] * len(sessions)
    rows = usage_rows(sessions, 7, later, "claude-opus-5")
    rows += usage_rows(sessions, 8, later, "claude-haiku-4-5")
    bulk(rows)
    settle_after_bulk_load()
    kept.forget_all()
    assert plan_views.plan_view("big").usage is not None
    after = data()
    return [
        (engine, "no usage", spread(before, " ms")),
        (engine, "usage on every session", spread(after, " ms")),
    ]


def metrics_with_spend(engine):
    from sessions.models import Event
    from sessions.readmodels import flow, kept

    seed(0, SESSIONS, prefix="m-")
    since, until = T0 - timedelta(days=1), T0 + timedelta(days=SESSIONS // 1440 + 2)

    def data():
        return [timed(lambda: flow.window_metrics(since, until), repeat=9)[0] for _ in range(RUNS)]

    before = data()
    closes = Event.objects.filter(type="session_close", session__startswith="m-")
    ids, moments = zip(*closes.values_list("session", "timestamp"), strict=True)
    later = [moment + timedelta(minutes=1) for moment in moments]  # reported after the close
    bulk(usage_rows(ids, 6, later, "claude-sonnet-4-5"))
    settle_after_bulk_load()
    kept.forget_all()
    begin = time.perf_counter()  # a new process's first request builds the kept spend
    assert flow.window_metrics(since, until)["spend"]["by_owner"]
    first = (time.perf_counter() - begin) * 1000
    after = data()
    # The same table without the spend: what the 100,000 more rows cost the flow folds.
    grown = [timed(lambda: flow.metrics(since, until), repeat=9)[0] for _ in range(RUNS)]
    return [
        (engine, f"{SESSIONS:,} sessions, no usage", spread(before, " ms")),
        (engine, f"{SESSIONS:,} sessions, usage on each", spread(after, " ms")),
        (engine, "the same, a process's first request", f"{first:,.0f} ms"),
        (engine, "the same table, the metrics without spend", spread(grown, " ms")),
    ]


def main(engine):
    setup_django(engine)
    if "plan" in PARTS:
        report(
            f"The 500-node plan's view data, median of {RUNS} runs of 9 (range)",
            plan_view_with_usage(engine),
            ["database", "sessions", "plan view data"],
        )
    if "metrics" in PARTS:
        report(
            f"The metrics over the window, median of {RUNS} runs of 9 (range)",
            metrics_with_spend(engine),
            ["database", "sessions", "window metrics"],
        )


if __name__ == "__main__":
    run_per_engine(__file__, main)
    sys.exit(0)
