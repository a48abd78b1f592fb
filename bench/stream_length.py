"""Benchmark 6: what one session costs at 10, 1,000, 10,000 and ~100,000 events.

    python bench/stream_length.py [sqlite] [postgresql]

Each stream is imported (start, then block/unblock alternating, as a chatty agent's;
with BENCH_STREAM=heartbeats, a noted progress that wrote a path, then a worker's bare
heartbeats, then a block), then, through Django's full request stack in process (test
client, production settings): the API view `GET /api/sessions/<id>`, the session page's
first screen, its card on the board (its view made into a card and rendered, as the
board does), and an append (`POST …/events`, block and unblock in turn, each answered
with the view).
Reports the median and range of 7 runs of 20 requests each (the runs interleave the
lengths), and the ratio to the 10-event stream. The largest stream stops short of the
cap (`MAX_STREAM_EVENTS`) so that appends are still allowed.
"""

import itertools
import os
import statistics
import time
from collections import defaultdict
from datetime import timedelta

from common import T0, report, run_per_engine, settle_after_bulk_load, setup_django

LENGTHS = tuple(int(n) for n in os.environ.get("BENCH_LENGTHS", "10,1000,10000,99800").split(","))
RUNS, REQUESTS = 7, 20
KIND = os.environ.get("BENCH_STREAM", "transitions")


def stream(session_id, length):
    from sessions.domain.records import EventRecord
    from sessions.domain.vocabulary import BLOCK, PROGRESS, START, UNBLOCK

    events = [EventRecord(session_id, 1, START, T0, "bench", title="Long agent session")]
    if KIND == "heartbeats":
        at = [T0 + timedelta(seconds=seq) for seq in range(length + 1)]
        events.append(
            EventRecord(
                session_id, 2, PROGRESS, at[2], "bench", note="halfway", paths=["src/app.py"]
            )
        )
        events += [
            EventRecord(session_id, seq, PROGRESS, at[seq], "bench") for seq in range(3, length)
        ]
        events.append(EventRecord(session_id, length, BLOCK, at[length], "bench", reason="waiting"))
        return events
    for seq in range(2, length + 1):
        kind = BLOCK if seq % 2 == 0 else UNBLOCK
        fields = {"reason": f"waiting on step {seq}"} if kind == BLOCK else {}
        events.append(
            EventRecord(session_id, seq, kind, T0 + timedelta(seconds=seq), "bench", **fields)
        )
    return events


def per_request_ms(request):
    """Mean milliseconds of `REQUESTS` calls of `request`."""
    begin = time.perf_counter()
    for _ in range(REQUESTS):
        request()
    return (time.perf_counter() - begin) * 1000 / REQUESTS


def main(engine):
    setup_django(engine)
    from django.contrib.auth.models import User
    from django.template.loader import render_to_string
    from django.test import Client, RequestFactory

    from sessions.readmodels import session_views
    from sessions.rules.imports import import_stream
    from sessions.rules.tokens import create_token
    from sessions.web import cards

    user = User.objects.create_user("bench")
    token = create_token(user, "bench")[1]
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    browser = Client()
    browser.force_login(user)
    appends = defaultdict(itertools.count)
    card_request = RequestFactory().get("/")
    card_request.user = user

    def card(session_id):
        """One card of the board: its session's view, made into a card and rendered."""
        view = session_views.session_views([session_id])[session_id]
        context = {"card": cards.make_card(view, user), "on_card": True}
        return render_to_string("sessions/_card.html", context, card_request)

    def append(session_id):
        # Each stream ends blocked: its appends unblock, block, unblock…
        if next(appends[session_id]) % 2 == 0:
            body = {"type": "session_unblock"}
        else:
            body = {"type": "session_block", "reason": "again"}
        response = api.post(f"/api/sessions/{session_id}/events", body, "application/json")
        assert response.status_code == 201, response.content

    for length in LENGTHS:
        import_stream(f"len-{length}", stream(f"len-{length}", length))  # ends blocked
    settle_after_bulk_load()
    measures = {}
    for length in LENGTHS:
        session_id = f"len-{length}"
        measures[length] = {
            "view (API)": lambda s=session_id: api.get(f"/api/sessions/{s}"),
            "session page": lambda s=session_id: browser.get(f"/sessions/{s}/"),
            "card (board)": lambda s=session_id: card(s),
            "append (API)": lambda s=session_id: append(s),
        }
        for request in measures[length].values():
            request()  # warm up
    # Runs interleave the lengths, so that the machine's drift hits every length alike.
    samples = {(length, name): [] for length in LENGTHS for name in measures[length]}
    for _ in range(RUNS):
        for length in LENGTHS:
            for name, request in measures[length].items():
                samples[length, name].append(per_request_ms(request))
    rows, baseline = [], {}
    for (length, name), runs in samples.items():
        median = statistics.median(runs)
        baseline.setdefault(name, median)
        rows.append(
            (
                engine,
                name,
                f"{length:,}",
                f"{median:.2f}",
                f"{min(runs):.2f}–{max(runs):.2f}",
                f"{median / baseline[name]:.2f}×",
            )
        )
    report(
        f"Cost per request by stream length ({engine}, {KIND})",
        rows,
        ["database", "request", "events", "median ms", "range ms", "vs 10 events"],
    )


if __name__ == "__main__":
    run_per_engine(__file__, main)
