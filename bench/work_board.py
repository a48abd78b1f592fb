"""Benchmark: the board when every card says where its work lands (issue 37).

    python bench/work_board.py [sqlite] [postgresql]

1,000 open sessions of 20 events. Server time (median of 15, through Django's whole
request handling) of the board page, and of `GET /api/sessions?page_size=200`, as they
are, and after every session reported its repo, branch and head commit, a pull request
and two check runs at the head (5 `session_work` events each). Each figure is measured
on a database of its own, freshly seeded, in alternating rounds (the machine's noise
moves a figure more than the order of two measurements should); the table gives the
median and range of the rounds' medians.

The goal: the board with work at most 1.1× today's board. At a commit from before work
existed, copy this file into its bench/ and run it there: it measures the board without
work only (`BENCH_ROUNDS`, default 3).
"""

import os
import statistics
import sys
from datetime import timedelta

from common import T0, report, reset_database, run_per_engine, seed, setup_django, timed

OPEN = 1000
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))


def work_reports(work_type):
    """Five reports a session: repo, branch and head; a pull request; its state; two check
    runs at the head, the second red on most sessions."""
    from sessions.domain.records import EventRecord

    at = T0 + timedelta(days=40)

    def work(n, seq, **fields):
        return EventRecord(f"o{n}", seq, work_type, at, "bench", **fields)

    reports = []
    for n in range(OPEN):
        head = f"{n:040x}"
        reports += [
            work(n, 21, repo="acme/shop", branch=f"task-{n}", commit=head),
            work(n, 22, pr=n + 1, pr_url=f"https://github.com/acme/shop/pull/{n + 1}"),
            work(n, 23, pr_state="open"),
            work(n, 24, commit=head, check="ci/test", check_state="success"),
            work(n, 25, commit=head, check="lint", check_state="failure" if n % 7 else "pending"),
        ]
    return reports


def measure(engine, with_work, work_type):
    """(board p50, list p50) in ms on a fresh database, with or without work."""
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connections
    from django.test import Client

    from sessions import store
    from sessions.readmodels import kept
    from sessions.rules.tokens import create_token

    connections.close_all()
    reset_database(engine)
    call_command("migrate", verbosity=0)
    kept.forget_all()
    seed(OPEN)
    if with_work:
        with store.holding("bench-work"):
            store.insert_many(work_reports(work_type))
    user = User.objects.create_user("viewer")
    token = create_token(user, "bench")[1]
    browser, agent = Client(), Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    browser.force_login(user)

    def get(client, path):
        def run():
            assert client.get(path).status_code == 200

        return run

    return timed(get(browser, "/"))[0], timed(get(agent, "/api/sessions?page_size=200"))[0]


def main(engine):
    setup_django(engine)
    try:
        from sessions.domain.vocabulary import WORK
    except ImportError:  # a commit from before work existed: today's board only
        WORK = None
    kinds = [False] if WORK is None else [False, True]
    figures = {kind: [] for kind in kinds}
    for _ in range(ROUNDS):
        for kind in kinds:
            figures[kind].append(measure(engine, kind, WORK))

    def cell(samples):
        return f"{statistics.median(samples):.1f} ({min(samples):.1f}–{max(samples):.1f})"

    rows = [
        [
            engine,
            "5 work reports a session" if kind else "no work reported",
            cell([board for board, _ in figures[kind]]),
            cell([listed for _, listed in figures[kind]]),
        ]
        for kind in kinds
    ]
    report(
        f"The board and the list at {OPEN:,} open sessions, with and without work"
        f" (median and range of {ROUNDS} rounds' medians)",
        rows,
        ["engine", "sessions", "board p50 ms", "list 200 p50 ms"],
    )


if __name__ == "__main__":
    run_per_engine(__file__, main)
    sys.exit(0)
