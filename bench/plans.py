"""Benchmark: build plans. Racing claims over HTTP, and a large plan's view and page.

    python bench/plans.py [sqlite] [postgresql]

1. Claim-next: 12 agents claim from one 480-node plan over HTTP (gunicorn, 2 sync
   workers, one connection per request) until nothing is ready: claims/s, p50/p99, and
   duplicates (nodes started twice; must be 0). In the same run, the plain append at 12
   clients, for the ratio. Three runs each: median and range.
2. A 500-node plan with 5,000 node sessions: the plan view's data (`plan_views.plan_view`)
   and the whole page (`/plans/<id>/`, in-process client), with node sessions of 6 and of
   60 events (the view must not grow with their length).
"""

import json
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from append_http import run as run_appends
from append_http import start_server, timed_exchange
from common import (
    T0,
    percentile,
    report,
    run_per_engine,
    settle_after_bulk_load,
    setup_django,
    timed,
)

AGENTS = 12
CLAIM_NODES = 480
RUNS = 3


def claim_request(token, plan_id):
    return (
        f"POST /api/plans/{plan_id}/claim HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        "Content-Length: 2\r\nConnection: close\r\n\r\n{}"
    ).encode()


def agent(token, plan_id):
    latencies, claimed, errors = [], [], 0
    request = claim_request(token, plan_id)
    while True:
        answer = timed_exchange(request)
        if answer is None:
            errors += 1
            continue
        milliseconds, status, body = answer
        latencies.append(milliseconds)
        if status == 201:
            claimed.append(json.loads(body)["node"])
        elif status == 409 and json.loads(body)["error"] == "nothing_ready":
            return latencies, claimed, errors
        else:
            errors += 1


def claim_race(token, user, plan_id):
    from sessions.models import Event
    from sessions.rules.append import append_event

    nodes = [{"key": f"n{i}", "title": f"Node {i}"} for i in range(CLAIM_NODES)]
    append_event(plan_id, "plan_create", {"title": plan_id, "nodes": nodes}, user=user)
    begin = time.perf_counter()
    with ThreadPoolExecutor(AGENTS) as pool:
        results = list(pool.map(lambda _: agent(token, plan_id), range(AGENTS)))
    elapsed = time.perf_counter() - begin
    latencies = [ms for result in results for ms in result[0]]
    claimed = [node for result in results for node in result[1]]
    stored = list(Event.objects.filter(plan=plan_id).values_list("node", flat=True))
    duplicates = (len(claimed) - len(set(claimed))) + (len(stored) - len(set(stored)))
    errors = sum(result[2] for result in results)
    assert sorted(stored) == sorted(claimed) and len(stored) == CLAIM_NODES, "claims lost"
    return len(claimed) / elapsed, latencies, duplicates, errors


def spread(values, unit=""):
    return f"{statistics.median(values):,.1f}{unit} ({min(values):,.1f}–{max(values):,.1f})"


def claims(engine):
    from django.contrib.auth.models import User

    from sessions.rules.tokens import create_token

    user = User.objects.create_user("bench")
    _, token = create_token(user, "bench")
    server = start_server(engine)
    rates, p99s, append_rates, duplicates, errors = [], [], [], 0, 0
    try:
        for run in range(RUNS):
            rate, latencies, dup, err = claim_race(token, user, f"race{run}")
            rates.append(rate)
            p99s.append(percentile(latencies, 0.99))
            duplicates += dup
            errors += err
            elapsed, _, acknowledged, _, _ = run_appends(token, AGENTS, f"a{run}-")
            append_rates.append(len(acknowledged) / elapsed)
    finally:
        server.terminate()
        server.wait(timeout=30)
    ratio = statistics.median(rates) / statistics.median(append_rates)
    report(
        f"Claim-next, {AGENTS} racing agents over HTTP ({engine}), {RUNS} runs",
        [
            (
                engine,
                spread(rates),
                spread(p99s, " ms"),
                duplicates,
                errors,
                spread(append_rates),
                f"{ratio:.2f}",
            )
        ],
        ["database", "claims/s", "p99", "duplicates", "errors", "appends/s", "claims ÷ appends"],
    )


def big_plan(plan_id, events_per_session):
    """500 nodes in layers of 25, each needing two of the layer before; 10 sessions per
    node (9 closed as failed, the last done or, on the last layers, still running)."""
    from django.contrib.auth.models import User

    from sessions.domain.vocabulary import BLOCK, CLOSE, START, UNBLOCK
    from sessions.models import Event
    from sessions.rules.append import append_event

    nodes = []
    for i in range(500):
        layer, place = divmod(i, 25)
        needs = [f"k{(layer - 1) * 25 + (place + d) % 25}" for d in (0, 7)] if layer else []
        nodes.append({"key": f"k{i}", "title": f"Task {i}", **({"needs": needs} if needs else {})})
    user = User.objects.get_or_create(username="planner")[0]
    append_event(plan_id, "plan_create", {"title": "Big", "nodes": nodes}, user=user)
    rows = []
    for i in range(500):
        for attempt in range(10):
            session = f"{plan_id}-{i}-{attempt}"
            start = T0 + timedelta(hours=i, minutes=attempt * 5)
            rows.append(
                Event(
                    session=session,
                    seq=1,
                    type=START,
                    timestamp=start,
                    actor="agent",
                    title=f"Task {i}",
                    plan=plan_id,
                    node=f"k{i}",
                )
            )
            for seq in range(2, events_per_session):
                kind = BLOCK if seq % 2 == 0 else UNBLOCK
                rows.append(
                    Event(
                        session=session,
                        seq=seq,
                        type=kind,
                        actor="agent",
                        timestamp=start + timedelta(seconds=seq),
                        reason="waiting" if kind == BLOCK else None,
                    )
                )
            running = attempt == 9 and i >= 450
            if not running:
                rows.append(
                    Event(
                        session=session,
                        seq=events_per_session,
                        type=CLOSE,
                        actor="agent",
                        timestamp=start + timedelta(minutes=4),
                        outcome="done" if attempt == 9 else "failed",
                    )
                )
        if len(rows) > 20_000:
            Event.objects.bulk_create(rows, batch_size=5000)
            rows = []
    Event.objects.bulk_create(rows, batch_size=5000)


def plan_view(engine):
    from django.contrib.auth.models import User
    from django.test import Client

    from sessions.readmodels import plan_views

    out = []
    viewer = User.objects.create_user("viewer")
    client = Client()
    client.force_login(viewer)
    for events in (6, 60):
        plan_id = f"big{events}"
        big_plan(plan_id, events)
        settle_after_bulk_load()
        view = plan_views.plan_view(plan_id)
        # The plan took the default lease, and its unclosed sessions are long silent: all
        # 50 held nodes have lapsed (each read at every view: lapse is never kept).
        assert view.total == 500 and view.counts.get("lapsed") == 50, view.counts
        data = [timed(lambda p=plan_id: plan_views.plan_view(p), repeat=9)[0] for _ in range(RUNS)]

        def page(p=plan_id):
            assert client.get(f"/plans/{p}/").status_code == 200

        pages = [timed(page, repeat=9)[0] for _ in range(RUNS)]
        out.append((engine, events, spread(data, " ms"), spread(pages, " ms")))
    report(
        f"A 500-node plan with 5,000 node sessions ({engine}): median of {RUNS} runs (range)",
        out,
        ["database", "events per node session", "plan view data", "plan page"],
    )


def main(engine):
    setup_django(engine)
    claims(engine)
    plan_view(engine)


if __name__ == "__main__":
    run_per_engine(__file__, main)
