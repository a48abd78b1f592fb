"""Benchmark 1: events/s through `append_event`, 1 writer and 4 concurrent writers.

    python bench/append_inprocess.py [sqlite] [postgresql]

Each run appends EVENTS block events spread over SESSIONS sessions (each writer takes its
own share of the sessions), then checks every seq is contiguous.
"""

import time
from concurrent.futures import ThreadPoolExecutor

from common import report, run_per_engine, setup_django

EVENTS = 4000
SESSIONS = 40


def run(writers):
    from django.contrib.auth.models import User
    from django.db import connection

    from sessions.models import Event
    from sessions.rules.append import append_event

    user = User.objects.get(username="bench")
    prefix = f"w{writers}-"
    sessions = [f"{prefix}{n}" for n in range(SESSIONS)]
    for session_id in sessions:
        append_event(session_id, "session_start", {"title": session_id}, user=user)

    def writer(index):
        mine = sessions[index::writers]
        try:
            for n in range(EVENTS // writers):
                append_event(mine[n % len(mine)], "session_block", {"reason": f"r{n}"}, user=user)
        finally:
            connection.close()

    begin = time.perf_counter()
    with ThreadPoolExecutor(writers) as pool:
        list(pool.map(writer, range(writers)))
    elapsed = time.perf_counter() - begin
    stored = Event.objects.filter(session__startswith=prefix, type="session_block").count()
    assert stored == EVENTS, (stored, EVENTS)
    return EVENTS / elapsed


def main(engine):
    setup_django(engine)
    from django.contrib.auth.models import User

    User.objects.create_user("bench")
    rows = [(engine, writers, EVENTS, f"{run(writers):,.0f}") for writers in (1, 4)]
    report(f"Append in process ({engine})", rows, ["database", "writers", "events", "events/s"])


if __name__ == "__main__":
    run_per_engine(__file__, main)
