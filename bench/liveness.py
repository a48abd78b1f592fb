"""Benchmark: liveness. What heartbeats and reclaims cost, over HTTP to a real gunicorn.

    python bench/liveness.py [sqlite] [postgresql]

1. A heartbeat costs no more than a plain append: 8 clients append `session_progress`
   (with a note) to their sessions, and in the same round `session_block`/`unblock`
   pairs: events/s of each and their ratio (must be ≥ 0.95). ROUNDS rounds, median and
   range.
2. A reclaim costs at most 1.5× a plain claim: 12 racing agents claim every node of a
   50-node plan until nothing is left, once where every node is ready (plain claims)
   and once where every node is held by a session silent for two hours past a 30-minute
   lease (each claim a reclaim: a close and a start in one transaction). Claims/s of
   each, their ratio, and from the table: nodes started twice in one round (duplicate
   reclaims) and silent sessions closed more than once (double closes): both must be 0.
3. 1,000 agents heartbeating once a minute (17 appends/s, spread over 1,000 open
   sessions) while 20 people look at the board, each loading it every 4 seconds (as a
   board's poll would, 5 loads/s in all) for SECONDS seconds: the board's p95 with and
   without the heartbeats, and at 2×, 4×, 8× and 16× the rate, to find where one
   server's board p95 doubles.

BENCH_PARTS (e.g. "2,3") runs some parts only.
"""

import json
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from append_http import append_request, start_server, timed_exchange
from common import percentile, report, run_per_engine, setup_django

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
PARTS = os.environ.get("BENCH_PARTS", "1,2,3").split(",")
SECONDS = 15
PEOPLE = 20
LOOK_EVERY = 4.0  # seconds between one person's board loads
CLIENTS = 8
APPENDS = 1600  # per kind and round
AGENTS = 12
NODES = 50


def spread(values, form="{:,.1f}"):
    median = statistics.median(values)
    return f"{form.format(median)} ({form.format(min(values))}–{form.format(max(values))})"


def appends(token, sessions, make_event):
    """Every client appends to its own sessions in turn: events/s acknowledged."""
    shares = [sessions[n::CLIENTS] for n in range(CLIENTS)]

    def client(mine):
        done = 0
        for n in range(APPENDS // CLIENTS):
            answer = timed_exchange(append_request(token, mine[n % len(mine)], make_event(n)))
            done += answer is not None and answer[1] == 201
        return done

    begin = time.perf_counter()
    with ThreadPoolExecutor(CLIENTS) as pool:
        done = sum(pool.map(client, shares))
    return done / (time.perf_counter() - begin), done


def heartbeat_vs_block(engine, token, user):
    from sessions.rules.append import append_event

    def started(prefix):
        ids = [f"{prefix}{n}" for n in range(CLIENTS * 10)]
        for session_id in ids:
            append_event(session_id, "session_start", {"title": session_id}, user=user)
        return ids

    def block(n):
        turn = n // 10
        return (
            {"type": "session_block", "reason": f"r{n}"}
            if turn % 2 == 0
            else {"type": "session_unblock"}
        )

    def beat(n):
        return {"type": "session_progress", "note": f"step {n}"}

    beats, blocks, ratios = [], [], []
    for number in range(ROUNDS):
        block_rate, _ = appends(token, started(f"b{number}-"), block)
        beat_rate, _ = appends(token, started(f"h{number}-"), beat)
        blocks.append(block_rate)
        beats.append(beat_rate)
        ratios.append(beat_rate / block_rate)
    report(
        f"Heartbeat vs plain append, {CLIENTS} clients over HTTP ({engine}), {ROUNDS} rounds",
        [(engine, spread(blocks), spread(beats), spread(ratios, "{:.2f}"))],
        ["database", "block/unblock ev/s", "progress ev/s", "progress ÷ block"],
    )


def claim_all(token, plan_id):
    request = (
        f"POST /api/plans/{plan_id}/claim HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        "Content-Length: 2\r\nConnection: close\r\n\r\n{}"
    ).encode()

    def agent():
        claimed = []
        while True:
            answer = timed_exchange(request)
            if answer is None:
                continue
            _, status, body = answer
            if status == 201:
                claimed.append(json.loads(body)["node"])
            elif status == 409 and json.loads(body)["error"] == "nothing_ready":
                return claimed

    begin = time.perf_counter()
    with ThreadPoolExecutor(AGENTS) as pool:
        claimed = [n for found in pool.map(lambda _: agent(), range(AGENTS)) for n in found]
    return len(claimed) / (time.perf_counter() - begin), claimed


def reclaim_vs_claim(engine, token, user):
    from django.utils import timezone

    from sessions.models import Event
    from sessions.rules.append import append_event

    nodes = [{"key": f"n{i}", "title": f"Node {i}"} for i in range(NODES)]
    fields = {"nodes": nodes, "lease": 30, "max_attempts": 3}
    plain, reclaims, duplicates, double_closes = [], [], 0, 0
    for number in range(ROUNDS):
        append_event(f"fresh{number}", "plan_create", {"title": "F", **fields}, user=user)
        rate, claimed = claim_all(token, f"fresh{number}")
        assert sorted(claimed) == sorted(n["key"] for n in nodes), "plain claims lost"
        plain.append(rate)
        plan_id, then = f"silent{number}", timezone.now() - timedelta(hours=2)
        append_event(plan_id, "plan_create", {"title": "S", **fields}, user=user, now=then)
        for node in nodes:
            fields_of = {"plan": plan_id, "node": node["key"]}
            append_event(
                f"{plan_id}-{node['key']}", "session_start", fields_of, user=user, now=then
            )
        rate, claimed = claim_all(token, plan_id)
        assert sorted(claimed) == sorted(n["key"] for n in nodes), "reclaims lost"
        reclaims.append(rate)
        starts = list(Event.objects.filter(plan=plan_id).values_list("node", flat=True))
        duplicates += len(starts) - 2 * len(set(starts))
        closes = list(
            Event.objects.filter(
                session__startswith=f"{plan_id}-", type="session_close"
            ).values_list("session", flat=True)
        )
        double_closes += len(closes) - len(set(closes))
        assert len(set(closes)) == NODES, "a silent session was not closed"
    ratio = statistics.median(plain) / statistics.median(reclaims)
    report(
        f"Reclaim vs claim, {AGENTS} racing agents over HTTP, {NODES} nodes ({engine}), "
        f"{ROUNDS} rounds",
        [(engine, spread(plain), spread(reclaims), f"{ratio:.2f}", duplicates, double_closes)],
        [
            "database",
            "claims/s",
            "reclaims/s",
            "cost of a reclaim ÷ a claim",
            "duplicate reclaims",
            "double closes",
        ],
    )


def board_under_heartbeats(engine, token, user):
    from sessions.rules.append import append_event

    agents = [f"agent-{n}" for n in range(1000)]
    for session_id in agents:
        append_event(session_id, "session_start", {"title": session_id}, user=user)
    from django.test import Client

    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"].value
    board = (
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Cookie: sessionid={cookie}\r\nConnection: close\r\n\r\n"
    ).encode()

    def paced(interval, until, action, offset=0.0):
        """`action(n)` every `interval` seconds from `offset` until `until`."""
        n, begin = 0, time.perf_counter() + offset
        while (due := begin + n * interval) < until:
            if (delay := due - time.perf_counter()) > 0:
                time.sleep(delay)
            action(n)
            n += 1

    def measure(rate):
        until = time.perf_counter() + SECONDS
        times = []

        def beat(n):
            event = {"type": "session_progress"}
            timed_exchange(append_request(token, agents[n % len(agents)], event))

        def look(_):
            answer = timed_exchange(board)
            if answer is not None and answer[1] == 200:
                times.append(answer[0])

        with ThreadPoolExecutor(PEOPLE + 8) as pool:
            people = [
                pool.submit(paced, LOOK_EVERY, until, look, LOOK_EVERY * p / PEOPLE)
                for p in range(PEOPLE)
            ]
            # Heartbeats from 8 senders, each a share of the rate.
            beats = [pool.submit(paced, 8 / rate, until, beat, p / rate) for p in range(8) if rate]
            for future in people + beats:
                future.result()
        return percentile(times, 0.95)

    rows = []
    quiet = statistics.median(measure(0) for _ in range(ROUNDS))
    rows.append((engine, "none", f"{quiet:.0f}", "1.00"))
    for factor in (1, 2, 4, 8, 16):
        rate = 17 * factor
        p95 = statistics.median(measure(rate) for _ in range(ROUNDS))
        rows.append(
            (engine, f"{rate}/s ({1000 * factor:,} agents)", f"{p95:.0f}", f"{p95 / quiet:.2f}")
        )
    report(
        f"The board (1,000 open sessions) for {PEOPLE} people loading it every {LOOK_EVERY:.0f} s,"
        f" under heartbeats ({engine}), {SECONDS} s each, median of {ROUNDS} rounds",
        rows,
        ["database", "heartbeats", "board p95 ms", "÷ quiet"],
    )


def main(engine):
    setup_django(engine)
    from django.contrib.auth.models import User

    from sessions.rules.tokens import create_token

    user = User.objects.create_user("bench", is_superuser=True, is_staff=True)
    _, token = create_token(user, "bench")
    server = start_server(engine)
    try:
        for part, run in (
            ("1", heartbeat_vs_block),
            ("2", reclaim_vs_claim),
            ("3", board_under_heartbeats),
        ):
            if part in PARTS:
                run(engine, token, user)
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    run_per_engine(__file__, main)
