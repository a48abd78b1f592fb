"""Benchmark 2: appends over HTTP to a real gunicorn on loopback, 8 and 32 clients.

    python bench/append_http.py [sqlite] [postgresql]

Each client owns SESSIONS_PER_CLIENT sessions and appends block/unblock events to them in
turn until the fixed total is reached (sessions end with 15 to 50 events, as real ones
do), one connection per request (gunicorn's sync workers close each). The clients write
requests on raw sockets: the load generator shares the 2 cores with the server, and
http.client cost it twice as much CPU per request. Reports events/s, p50/p99 latency, errors,
and checks that every acknowledged event is stored exactly once.

The ceiling: the same clients ask a trivial view (`ceiling_urls.py`, a JsonResponse behind
the project's own middleware, on the same server) for as many requests just before and
just after each append run; the append's rate is reported as a share of their mean.
This machine moves a figure by a third from one minute to the next, so each client
count runs ROUNDS times (ceiling, appends, ceiling) and reports the median and range.
"""

import json
import os
import socket
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

from common import ROOT, percentile, report, run_per_engine, setup_django, start_gunicorn

TOTAL = 3000
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "4"))
SESSIONS_PER_CLIENT = 10
PORT = 8799
# Override to compare server shapes, e.g. BENCH_GUNICORN="--workers 1 --threads 8".
GUNICORN = os.environ.get("BENCH_GUNICORN", "--workers 2 --worker-class sync").split()


def start_server(engine):
    # The project's settings and URLs, plus the trivial view of the ceiling.
    return start_gunicorn(
        engine,
        PORT,
        GUNICORN,
        DJANGO_SETTINGS_MODULE="ceiling_settings",
        PYTHONPATH=str(ROOT / "bench"),
    )


def exchange(request):
    """Send one request on a new connection and read the answer until the server closes
    it (the sync workers close every connection): (status, body)."""
    with socket.create_connection(("127.0.0.1", PORT), timeout=30) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def timed_exchange(request):
    """`exchange`, timed: (milliseconds, status, body), or None when the connection
    failed."""
    begin = time.perf_counter()
    try:
        status, body = exchange(request)
    except (OSError, ValueError, IndexError):
        return None
    return (time.perf_counter() - begin) * 1000, status, body


def append_request(token, session_id, event):
    body = json.dumps(event).encode()
    head = (
        f"POST /api/sessions/{session_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def client_run(token, sessions, count):
    latencies, acknowledged, errors = [], [], 0
    for n in range(count):
        session_id = sessions[n % len(sessions)]
        turn = n // len(sessions)
        event = (
            {"type": "session_block", "reason": f"r{n}"}
            if turn % 2 == 0
            else {"type": "session_unblock"}
        )
        answer = timed_exchange(append_request(token, session_id, event))
        if answer is None:
            errors += 1
            continue
        milliseconds, status, body = answer
        latencies.append(milliseconds)
        if status == 201:
            acknowledged.append((session_id, json.loads(body)["event"]["seq"]))
        else:
            errors += 1
    return latencies, acknowledged, errors


CEILING_REQUEST = b"GET /bench/ceiling HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def ceiling(clients):
    """Requests/s of the trivial view, by the same clients as the appends: the ceiling."""

    def client_run(count):
        for _ in range(count):
            answer = timed_exchange(CEILING_REQUEST)
            assert answer is not None and answer[1] == 200

    begin = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client_run, [TOTAL // clients] * clients))
    return TOTAL / (time.perf_counter() - begin)


def run(token, clients, prefix):
    from django.contrib.auth.models import User

    from sessions.rules.append import append_event

    user = User.objects.get(username="bench")
    sessions = [f"{prefix}{n}" for n in range(clients * SESSIONS_PER_CLIENT)]
    for session_id in sessions:
        append_event(session_id, "session_start", {"title": session_id}, user=user)
    shares = [sessions[n::clients] for n in range(clients)]
    begin = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(lambda mine: client_run(token, mine, TOTAL // clients), shares))
    elapsed = time.perf_counter() - begin
    latencies = [ms for result in results for ms in result[0]]
    acknowledged = [ack for result in results for ack in result[1]]
    errors = sum(result[2] for result in results)
    return elapsed, latencies, acknowledged, errors, sessions


def stored_exactly_once(acknowledged, sessions):
    from sessions.models import Event

    rows = list(Event.objects.filter(session__in=sessions, seq__gt=1).values_list("session", "seq"))
    return len(rows) == len(set(rows)) == len(acknowledged) and set(rows) == set(acknowledged)


def spread(values, form="{:,.0f}"):
    """Median and range of a figure over the rounds."""
    median = statistics.median(values)
    return f"{form.format(median)} ({form.format(min(values))}–{form.format(max(values))})"


def rounds(token, clients):
    """ROUNDS of (ceiling, appends, ceiling): one table row."""
    rates, roofs, latencies, errors, exact = [], [], [], 0, True
    for number in range(ROUNDS):
        before = ceiling(clients)
        elapsed, timed, acknowledged, failed, sessions = run(
            token, clients, f"c{clients}r{number}-"
        )
        roofs.append(statistics.mean([before, ceiling(clients)]))
        rates.append(len(acknowledged) / elapsed)
        latencies += timed
        errors += failed
        exact = exact and stored_exactly_once(acknowledged, sessions)
    return (
        clients,
        f"{ROUNDS} × {TOTAL}",
        spread(rates),
        spread(roofs),
        spread([rate / roof for rate, roof in zip(rates, roofs, strict=True)], "{:.2f}"),
        f"{percentile(latencies, 0.5):.1f}",
        f"{percentile(latencies, 0.99):.1f}",
        errors,
        "yes" if exact else "NO",
    )


def main(engine):
    setup_django(engine)
    from django.contrib.auth.models import User

    from sessions.rules.tokens import create_token

    _, token = create_token(User.objects.create_user("bench"), "bench")
    server = start_server(engine)
    try:
        rows = [(engine, *rounds(token, clients)) for clients in (8, 32)]
    finally:
        server.terminate()
        server.wait(timeout=30)
    report(
        f"Append over HTTP ({engine}, gunicorn {' '.join(GUNICORN)})",
        rows,
        [
            "database",
            "clients",
            "rounds × appends",
            "events/s",
            "ceiling req/s",
            "÷ ceiling",
            "p50 ms",
            "p99 ms",
            "errors",
            "stored exactly once",
        ],
    )


if __name__ == "__main__":
    run_per_engine(__file__, main)
