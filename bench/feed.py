"""Benchmark: the global feed (issue 14).

    python bench/feed.py [sqlite] [postgresql]

1,000,000 events (200,000 closed sessions of 5 events), then pages of 1,000 events
after a cursor deep in them (at 900,000), unnarrowed and narrowed to one event type:
`feed_model.feed` alone and the whole `GET /api/feed` through Django, median and range of
3 runs of 9 (one warm-up each).
"""

import statistics

from common import report, run_per_engine, seed, setup_django, timed

RUNS = 3


def spread(values):
    return f"{statistics.median(values):.1f} ms ({min(values):.1f}–{max(values):.1f})"


def main(engine):
    setup_django(engine)
    seed(0, closed_sessions=200_000, events_per_closed=5)
    from django.contrib.auth.models import User
    from django.test import Client

    from sessions.models import Event
    from sessions.readmodels import feed as feed_model

    assert Event.objects.count() == 1_000_000
    deep = Event.objects.order_by("id").values_list("id", flat=True)[899_999]
    client = Client()
    client.force_login(User.objects.create_user("viewer"))

    def page(query=""):
        answer = client.get(f"/api/feed?after={deep}&limit=1000{query}")
        assert answer.status_code == 200 and len(answer.json()["items"]) == 1000

    def fold():
        found, _ = feed_model.feed(deep, 1000)
        assert len(found) == 1000

    rows = [
        (
            "feed_model.feed, 1,000 events",
            [timed(fold, repeat=9, warmup=1)[0] for _ in range(RUNS)],
        ),
        ("GET /api/feed, 1,000 events", [timed(page, repeat=9, warmup=1)[0] for _ in range(RUNS)]),
        (
            "GET /api/feed?type=session_block, 1,000 events",
            [timed(lambda: page("&type=session_block"), repeat=9)[0] for _ in range(RUNS)],
        ),
    ]
    report(
        f"The feed after position {deep:,} of 1,000,000 events ({engine})",
        [(engine, what, spread(values)) for what, values in rows],
        ["database", "what", "time"],
    )


if __name__ == "__main__":
    run_per_engine(__file__, main)
