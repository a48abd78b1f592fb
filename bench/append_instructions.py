"""Instructions per API append, counted by valgrind's callgrind (issue 35's method, §24).

    python bench/append_instructions.py [CHECKOUT ...]

Wall-clock figures on these VMs move by more than the changes being judged; callgrind
counts the same instructions on every run. For each checkout (default: this one; give
another's folder, e.g. a `git worktree` of an older commit, to compare, the first named
being the baseline) a driver runs inside valgrind on a fresh SQLite file: it migrates,
makes a user and a token (`create_token`, which every version has), starts SESSIONS
sessions over the API, closes the connection (one that ran `migrate` has its statement
cache full of the migration's statements: §23's trap), then posts block/unblock appends
through Django's test client: the whole request, middleware, ninja, the token check, the
append and its answer. It runs twice, after FEW and after MANY appends; the instructions
per append are the difference over MANY - FEW, so the start-up drops out. Only the API's
paths are used, so any version of the project can be driven.
"""

import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = 80
FEW, MANY = int(os.environ.get("BENCH_FEW", "360")), int(os.environ.get("BENCH_MANY", "1360"))


def drive(appends: int) -> None:
    """Inside valgrind, in the checkout's folder: set up, then `appends` appends."""
    database = Path(tempfile.mkdtemp()) / "db.sqlite3"
    os.environ.update(
        DATABASE_URL=f"sqlite:///{database}",
        DJANGO_SETTINGS_MODULE=os.environ.get("BENCH_SETTINGS", "controltower.settings"),
        SECRET_KEY=secrets.token_urlsafe(50),
        DEBUG="0",
        SECURE_SSL_REDIRECT="0",
        ALLOWED_HOSTS="testserver",
    )
    sys.path.insert(0, os.getcwd())
    import io

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connections
    from django.test import Client

    call_command("migrate", verbosity=0)
    get_user_model().objects.create_user("bench", password=secrets.token_urlsafe())
    out = io.StringIO()
    call_command("create_token", "bench", stdout=out, stderr=io.StringIO())
    client = Client(HTTP_AUTHORIZATION=f"Bearer {out.getvalue().strip()}")

    def post(path: str, body: dict) -> None:
        answer = client.post(path, json.dumps(body), content_type="application/json")
        assert answer.status_code == 201, (answer.status_code, answer.content[:300])

    connections.close_all()
    for n in range(SESSIONS):
        post("/api/sessions", {"id": f"s{n}", "title": f"session {n}"})
    connections.close_all()
    for n in range(appends):
        turn = n // SESSIONS
        event = (
            {"type": "session_block", "reason": f"r{n}"}
            if turn % 2 == 0
            else {"type": "session_unblock"}
        )
        post(f"/api/sessions/s{n % SESSIONS}/events", event)


def instructions(checkout: Path, appends: int) -> int:
    """The instructions a driver of `appends` appends costs in all, under callgrind."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "callgrind.out"
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                str(Path(__file__).resolve()),
                "--drive",
                str(appends),
            ],
            cwd=checkout,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return int(re.search(r"^summary: (\d+)", out.read_text(), re.M).group(1))


def main(checkouts: list[Path]) -> None:
    print(f"instructions per append (SQLite, {SESSIONS} sessions, after {FEW} and {MANY})")
    baseline = None
    for checkout in checkouts:
        head = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        per_append = (instructions(checkout, MANY) - instructions(checkout, FEW)) / (MANY - FEW)
        baseline = baseline or per_append
        print(f"  {head or checkout}: {per_append / 1000:,.0f} K ({per_append / baseline:.2f}x)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--drive"]:
        drive(int(sys.argv[2]))
    else:
        main([Path(arg).resolve() for arg in sys.argv[1:]] or [ROOT])
