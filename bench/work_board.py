"""Benchmark: the board when every card says where its work lands (issue 37).

    python bench/work_board.py [sqlite] [postgresql]

1,000 open sessions of 20 events. Server time (median and p90 of 15, through Django's
whole request handling) of the board page, and of `GET /api/sessions?page_size=200`,
first as they are, then after every session reported its repo, branch and head commit,
a pull request and two check runs at the head (5 `session_work` events each). The goal:
the board with work at most 1.1× the board without (compare also with the board of
the code before work existed: `bench/board.py` with BENCH_SCENARIOS=1000:0 at e678e62).
"""

import sys
from datetime import timedelta

from common import T0, report, run_per_engine, seed, setup_django, timed

OPEN = 1000


def main(engine):
    setup_django(engine)
    from django.contrib.auth.models import User
    from django.test import Client

    from sessions import store
    from sessions.domain.records import EventRecord
    from sessions.domain.vocabulary import WORK
    from sessions.readmodels import kept
    from sessions.rules.tokens import create_token

    seed(OPEN)
    user = User.objects.create_user("viewer")
    token = create_token(user, "bench")[1]
    browser, agent = Client(), Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    browser.force_login(user)

    def get(client, path):
        def run():
            assert client.get(path).status_code == 200

        return run

    def measure(label):
        board = timed(get(browser, "/"))
        listed = timed(get(agent, "/api/sessions?page_size=200"))
        return [engine, label, *(f"{figure:.1f}" for figure in (*board, *listed))]

    rows = [measure("no work reported")]
    at = T0 + timedelta(days=40)

    def work(n, seq, **fields):
        return EventRecord(f"o{n}", seq, WORK, at, "bench", **fields)

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
    with store.holding("bench-work"):
        store.insert_many(reports)
    kept.forget_all()
    rows.append(measure("5 work reports a session"))
    report(
        f"The board and the list at {OPEN:,} open sessions, with and without work",
        rows,
        ["engine", "sessions", "board p50 ms", "board p90", "list 200 p50 ms", "list p90"],
    )


if __name__ == "__main__":
    run_per_engine(__file__, main)
    sys.exit(0)
