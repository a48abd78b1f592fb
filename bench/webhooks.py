"""Benchmark: the webhook worker (issue 14).

    python bench/webhooks.py [sqlite] [postgresql]

`manage.py deliver` (production settings, default pace) and a real HTTP receiver on
loopback (`tests/receiver.py`, answering 204):

- **Delivery rate**: a webhook added at position 0 of a backlog of 2,000 events; events
  per second from the first POST received to the last. 3 runs (a new webhook each).
- **Lag under load**: while `bench/append_http.py`'s load (8 clients, 4,000 appends to
  a real gunicorn) runs, how long after its timestamp each event reached the receiver,
  and how long after the last append the receiver had everything. 3 runs.

Every run checks that the receiver got each event once, in position order.
"""

import statistics
import subprocess
import sys
import time

from append_http import run as run_appends
from append_http import start_server
from common import ROOT, percentile, report, run_per_engine, seed, server_env, setup_django

from tests.support.receiver import Receiver

RUNS = 3
BACKLOG_SESSIONS = 400  # × 5 events


def spread(values, unit, digits=0):
    return (
        f"{statistics.median(values):,.{digits}f} {unit}"
        f" ({min(values):,.{digits}f}–{max(values):,.{digits}f})"
    )


def start_worker(engine):
    return subprocess.Popen(
        [sys.executable, "manage.py", "deliver"],
        cwd=ROOT,
        env=server_env(engine),
        stdout=subprocess.DEVNULL,
    )


def stop(process):
    process.terminate()
    process.wait(timeout=30)


def in_order_once(received, positions):
    return [r.json["position"] for r in received] == positions


def delivery_rate(engine, owner):
    from sessions.models import Event, Subscription
    from sessions.rules import subscriptions

    positions = list(Event.objects.order_by("id").values_list("id", flat=True))
    rates, ordered = [], True
    for _ in range(RUNS):
        receiver = Receiver()
        hook = Subscription.objects.create(owner=owner, url=receiver.url, secret="s", cursor=0)
        worker = start_worker(engine)
        try:
            assert receiver.wait_until(lambda got: len(got) >= len(positions), timeout=600)
        finally:
            stop(worker)
            receiver.close()
            subscriptions.remove(hook)
        got = receiver.received
        rates.append((len(got) - 1) / (got[-1].at - got[0].at))
        ordered &= in_order_once(got, positions)
    return rates, ordered


def lag_under_load(engine, owner, token):
    from sessions.models import Event
    from sessions.rules import subscriptions

    lags, drains, rows_ok, runs = [], [], True, []
    server = start_server(engine)
    try:
        alone = [run_appends(token, 8, f"alone{run}-") for run in range(RUNS)]
        for run in range(RUNS):
            receiver = Receiver()
            hook = subscriptions.subscribe(owner, receiver.url, "event")
            worker = start_worker(engine)
            time.sleep(2)  # the worker is up and following
            try:
                elapsed, _, acknowledged, errors, _ = run_appends(token, 8, f"lag{run}-")
                appended_by = time.time()
                expected = list(
                    Event.objects.filter(id__gt=hook.cursor)
                    .order_by("id")
                    .values_list("id", flat=True)
                )
                count = len(expected)
                assert receiver.wait_until(lambda got, n=count: len(got) >= n, timeout=600)
                time.sleep(1)
            finally:
                stop(worker)
                receiver.close()
                subscriptions.remove(hook)
            stamps = dict(Event.objects.filter(id__in=expected).values_list("id", "timestamp"))
            run_lags = [
                (r.wall - stamps[r.json["position"]].timestamp()) * 1000 for r in receiver.received
            ]
            lags += run_lags
            drains.append(max(0.0, max(r.wall for r in receiver.received) - appended_by))
            rows_ok &= in_order_once(receiver.received, expected) and not errors
            runs.append((len(acknowledged) / elapsed, percentile(run_lags, 0.5)))
    finally:
        stop(server)
    return lags, drains, rows_ok, runs, [len(a[2]) / a[0] for a in alone]


def main(engine):
    setup_django(engine)
    seed(0, closed_sessions=BACKLOG_SESSIONS, events_per_closed=5)
    from django.contrib.auth.models import User

    from sessions.rules.tokens import create_token

    owner = User.objects.create_user("bench")
    _, token = create_token(owner, "bench")
    rates, rate_ok = delivery_rate(engine, owner)
    lags, drains, lag_ok, runs, alone = lag_under_load(engine, owner, token)
    report(
        f"The webhook worker ({engine})",
        [
            (engine, "delivery rate, 2,000-event backlog", spread(rates, "events/s"), rate_ok),
            (engine, "append load, no worker running", spread(alone, "events/s"), ""),
            (
                engine,
                "append load during the lag runs",
                spread([r[0] for r in runs], "events/s"),
                "",
            ),
            (engine, "lag per event, p50 of each run", spread([r[1] for r in runs], "ms"), ""),
            (
                engine,
                "lag per event over all runs: p50 / p99 / max",
                f"{percentile(lags, 0.5):,.0f} / {percentile(lags, 0.99):,.0f}"
                f" / {max(lags):,.0f} ms",
                lag_ok,
            ),
            (engine, "last delivery after the last append", spread(drains, "s", 2), ""),
        ],
        ["database", "what", "figure", "each event once, in order"],
    )


if __name__ == "__main__":
    run_per_engine(__file__, main)
