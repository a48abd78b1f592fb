"""Benchmarks 3–5: board and API cost by size, an unchanged poll, and the files baseline.

    python bench/board.py [sqlite] [postgresql]

Server time (median and p90 of 15 runs, through Django's full request handling) to
render the board, to run the board's query alone (which sessions, in which column: the
part that depends on history), to render the first board of a new server process (which
builds its model of open sessions), and to answer GET /api/sessions; at 100, 1,000 and
5,000 open sessions of 20 events, and at 1,000 open with 0, 10,000 and 100,000 closed
sessions (5 events each) behind them; an unchanged poll; and the same board data (every
open session's view) computed by reading and replaying every session's `<id>.jsonl`
file instead.
"""

import io
import os
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from common import report, reset_database, run_per_engine, seed, setup_django, timed

SCENARIOS = [(100, 0), (1000, 0), (5000, 0), (1000, 10_000), (1000, 100_000)]
# A subset, e.g. BENCH_SCENARIOS="1000:0" for a before/after of one size.
if os.environ.get("BENCH_SCENARIOS"):
    SCENARIOS = [
        tuple(int(n) for n in item.split(":")) for item in os.environ["BENCH_SCENARIOS"].split(",")
    ]


def files_board_data(folder, now, threshold):
    """Board data the file-based way: read every log (a file does not say whether its
    session is open until it is replayed), replay it, keep the open sessions."""
    from sessions.domain import projections
    from sessions.domain.jsonl import decode_log

    views = []
    for path in folder.iterdir():
        session_id, events = decode_log(path.name, path.read_bytes())
        view = projections.session_view(session_id, events, now, threshold)
        if view.status != "closed":
            views.append(view)
    return views


def database_board_data(now, threshold):
    """The same views from the database: every open session's, as `Show all` loads them."""
    from sessions.readmodels import board as board_model
    from sessions.readmodels import session_views

    ids = [session_id for session_id, *_ in board_model.board_rows(None, None, now)]
    return list(session_views.session_views(ids, now, threshold).values())


def measure(opened, closed):
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client
    from django.utils import timezone

    from sessions.readmodels import board as board_model
    from sessions.readmodels import kept, session_views
    from sessions.rules.tokens import create_token
    from sessions.web.views import page_version

    begin = time.perf_counter()
    seed(opened, closed)
    seeded = time.perf_counter() - begin
    user = User.objects.create_user("viewer")
    _, token = create_token(user, "bench")
    browser, agent = Client(), Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    browser.force_login(user)

    def get(client, path, expected=200, **extra):
        response = client.get(path, **extra)
        assert response.status_code == expected, response.status_code

    board = timed(lambda: get(browser, "/"))
    # The part of the board that depends on history: which sessions to show, and how.
    since = timezone.now() - timedelta(hours=settings.RECENTLY_CLOSED_HOURS)
    board_query = timed(lambda: board_model.board_rows(None, None, since), 30)

    def first_board():
        # What a new server process pays once: its model of open sessions is built then.
        kept.forget_all()
        get(browser, "/")

    cold = timed(first_board, 5, warmup=0)
    api = timed(lambda: get(agent, "/api/sessions"))
    version = page_version()
    poll = timed(lambda: get(browser, f"/?since={version}", 204, HTTP_HX_REQUEST="true"), 50)

    now, threshold = timezone.now(), session_views.thresholds()
    with tempfile.TemporaryDirectory() as folder:
        call_command("export_jsonl", out=folder, stdout=io.StringIO())
        files = timed(lambda: files_board_data(Path(folder), now, threshold), 5)
    database = timed(lambda: database_board_data(now, threshold), 5)
    return seeded, board, board_query, cold, api, poll, database, files


def main(engine):
    setup_django(engine)
    from django.core.management import call_command
    from django.db import connections

    from sessions.readmodels import kept

    rows, poll_rows, file_rows = [], [], []
    for opened, closed in SCENARIOS:
        connections.close_all()
        reset_database(engine)
        kept.forget_all()  # a new database under the same process
        call_command("migrate", verbosity=0)
        seeded, board, board_query, cold, api, poll, database, files = measure(opened, closed)
        label = (engine, f"{opened:,}", f"{closed:,}")
        rows.append(
            (
                *label,
                f"{board[0]:.0f} / {board[1]:.0f}",
                f"{board_query[0]:.1f} / {board_query[1]:.1f}",
                f"{cold[0]:.0f}",
                f"{api[0]:.0f} / {api[1]:.0f}",
                f"{seeded:.0f}",
            )
        )
        poll_rows.append((*label, f"{poll[0]:.2f} / {poll[1]:.2f}"))
        file_rows.append(
            (*label, f"{database[0]:.0f}", f"{files[0]:.0f}", f"{files[0] / database[0]:.2f}")
        )
        print(f"done {label}", file=sys.stderr)
    report(
        f"Board and API server time ({engine})",
        rows,
        [
            "database",
            "open",
            "closed",
            "board ms (median / p90)",
            "board query ms (median / p90)",
            "first board of a process ms (median)",
            "GET /api/sessions ms (median / p90)",
            "seed s",
        ],
    )
    report(
        f"Unchanged poll ({engine})",
        poll_rows,
        ["database", "open", "closed", "poll ms (median / p90)"],
    )
    report(
        f"Board data: database vs replaying JSONL files ({engine})",
        file_rows,
        ["database", "open", "closed", "database ms", "files ms", "files ÷ database"],
    )


if __name__ == "__main__":
    run_per_engine(__file__, main)
