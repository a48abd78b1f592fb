"""Benchmark: the duplicate-work check's cost (issue 37).

    python bench/duplicates.py [sqlite] [postgresql]

1,000 open sessions of 20 events on 500 branches of one repo, two sessions a branch
(so 500 are duplicate work), each with a `session_work` report naming its repo, branch
and head; behind them 0, then 10,000, then 100,000 closed sessions of 5 events, each of
which had reported work on one of the same branches before it closed (the worst case
for a check that looked at history). Server time (median and p90 of 15, through
Django's whole request handling) of `GET /api/sessions?attention=true&page_size=200`
(every open session judged, its first page; the 500 duplicates are counted over all
pages) in a warm process, and of its first answer
in a process whose read models start empty ("cold", 3 runs). It must not grow with the
closed sessions.
"""

import sys
from datetime import timedelta

from common import T0, report, run_per_engine, seed, setup_django, timed

OPEN, BRANCHES = 1000, 500
CLOSED_STEPS = [0, 10_000, 100_000]
PATH = "/api/sessions?attention=true&page_size=200"


def work_reports(work_type, first, prefix, closed):
    """With `first`, a report for every open session (on branch n // 2); and one for each
    of the `closed` sessions seeded with `prefix` (on branch n % 500): each the stream's
    next event, so a closed session's report follows its close (a forge may report
    after one)."""
    from sessions.domain.records import EventRecord

    at = T0 + timedelta(days=40)
    reports = []
    if first:
        for n in range(OPEN):
            branch = f"task-{n // 2}"
            fields = {"repo": "acme/shop", "branch": branch, "commit": f"{n:040x}"}
            reports.append(EventRecord(f"o{n}", 21, work_type, at, "bench", **fields))
    for n in range(closed):
        fields = {"repo": "acme/shop", "branch": f"task-{n % BRANCHES}"}
        reports.append(EventRecord(f"{prefix}c{n}", 6, work_type, at, "bench", **fields))
    return reports


def main(engine):
    setup_django(engine)
    from django.contrib.auth.models import User
    from django.test import Client

    from sessions import store
    from sessions.domain.vocabulary import WORK
    from sessions.readmodels import kept
    from sessions.rules.tokens import create_token

    seed(OPEN)
    user = User.objects.create_user("bench")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {create_token(user, 'bench')[1]}")

    def listed(path=PATH):
        answer = client.get(path)
        assert answer.status_code == 200, answer.content[:300]
        return answer.json()

    def duplicates_listed():
        """The duplicates on every page of the attention list (longest overdue first:
        the blocked runs, older, come before them)."""
        found, page = 0, listed()
        while True:
            found += sum(item["attention"]["kind"] == "duplicate" for item in page["items"])
            if not page.get("next"):
                return found
            page = listed(page["next"])

    def cold():
        kept.forget_all()  # a new server process: its read models start empty
        listed()

    rows, closed = [], 0
    for step in CLOSED_STEPS:
        prefix = f"s{step}-"
        if step > closed:
            seed(0, step - closed, prefix=prefix)
        reports = work_reports(WORK, step == 0, prefix, step - closed)
        closed = step
        with store.holding("bench-work"):
            for start in range(0, len(reports), 5000):
                store.insert_many(reports[start : start + 5000])
        kept.forget_all()
        duplicates = duplicates_listed()
        warm = timed(listed)
        first = timed(cold, repeat=3, warmup=0)
        figures = (*warm, *first)
        rows.append([engine, f"{step:,}", duplicates, *(f"{f:.1f}" for f in figures)])
    report(
        f"GET {PATH} at {OPEN:,} open sessions on {BRANCHES} branches, by closed sessions",
        rows,
        ["engine", "closed", "duplicates listed", "p50 ms", "p90", "cold p50", "cold p90"],
    )


if __name__ == "__main__":
    run_per_engine(__file__, main)
    sys.exit(0)
