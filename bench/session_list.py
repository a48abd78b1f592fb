"""The session list at scale, with fresh and with stale statistics (issue 36).

    python bench/session_list.py [sqlite] [postgresql]

3,000 open sessions of 20 events and 48,000 closed ones of 5 (300,000 events), loaded
in bulk. On PostgreSQL autovacuum is turned off for the event table first, so the
planner works from the statistics of an empty table ("stale"), as after an import on a
server whose autovacuum has not come round yet; then `ANALYZE` ("fresh"). Server time
(median and p90 of 9 runs, through Django's full request handling) of GET /api/sessions
(the default page), of `?page_size=200` and of `?attention=true`, in a process that has
answered before ("warm") and in one whose read models start empty ("cold", 3 runs).
"""

import os
import sys

from common import report, run_per_engine, seed, setup_django, timed

OPEN, CLOSED = 3000, 48_000
QUERIES = ["/api/sessions", "/api/sessions?page_size=200", "/api/sessions?attention=true"]


def main(engine):
    setup_django(engine)
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client

    from sessions.rules.tokens import create_token

    if engine == "postgresql":
        # Statistics of a small table (a few sessions, analysed), then the bulk load with
        # autovacuum off: the planner still believes the table holds a hundred events.
        if os.environ.get("BENCH_NEVER_ANALYSED") != "1":
            seed(5, 5, prefix="early-")
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE tower_event SET (autovacuum_enabled = false)")
    seed(OPEN, CLOSED, events_per_open=20, events_per_closed=5, settle=engine != "postgresql")
    user = User.objects.create_user("bench")
    token = create_token(user, "bench")[1]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

    def get(path):
        def run():
            answer = client.get(path)
            assert answer.status_code == 200, answer.content[:300]

        return run

    from sessions.readmodels import kept

    def cold(path):
        def run():
            kept.forget_all()  # a new server process: its read models start empty
            get(path)()

        return run

    rows = []
    phases = ["stale", "fresh"] if engine == "postgresql" else ["fresh"]
    for phase in phases:
        if phase == "fresh" and engine == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE tower_event")
        for path in QUERIES:
            median, p90 = timed(get(path), repeat=9, warmup=1)
            rows.append([engine, phase, path, "warm", f"{median:.1f}", f"{p90:.1f}"])
            median, p90 = timed(cold(path), repeat=3, warmup=0)
            rows.append([engine, phase, path, "cold", f"{median:.1f}", f"{p90:.1f}"])
    report(
        f"GET /api/sessions at {OPEN:,} open and {CLOSED:,} closed sessions",
        rows,
        ["engine", "statistics", "request", "process", "median ms", "p90 ms"],
    )


if __name__ == "__main__":
    run_per_engine(__file__, main)
    sys.exit(0)
