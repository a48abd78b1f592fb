"""Shared set-up for the benchmarks: a fresh database, seeding, timing and reporting.

Each benchmark runs against a scratch database of its own (a SQLite file under /tmp, or
the PostgreSQL database `controltower_bench`), never the project's.
"""

import http.client
import os
import platform
import secrets
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SQLITE_PATH = Path("/tmp/controltower-bench.sqlite3")
PG_SERVER = os.environ.get("BENCH_PG_SERVER", "postgres://postgres@127.0.0.1:5432")
PG_NAME = "controltower_bench"


def database_url(engine):
    if engine == "sqlite":
        return f"sqlite:///{SQLITE_PATH}"
    return f"{PG_SERVER}/{PG_NAME}"


def reset_database(engine):
    """An empty database for `engine` ("sqlite" or "postgresql")."""
    if engine == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            Path(f"{SQLITE_PATH}{suffix}").unlink(missing_ok=True)
        return
    import psycopg

    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_NAME} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {PG_NAME}")


def server_env(engine):
    """Environment for Django in production mode on the bench database, over plain HTTP."""
    return {
        **os.environ,
        "DATABASE_URL": database_url(engine),
        "DJANGO_SETTINGS_MODULE": "controltower.settings",
        "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50),
        "DEBUG": "0",
        "SECURE_SSL_REDIRECT": "0",
        "ALLOWED_HOSTS": "testserver,127.0.0.1,localhost",
        # The webhook bench's receivers listen on loopback: an allowed internal receiver.
        "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
    }


def start_gunicorn(engine, port, options, **env):
    """gunicorn serving the project on 127.0.0.1:`port` (with `options`, and `env` over
    the bench's server environment for `engine`), once it answers."""
    args = [sys.executable, "-m", "gunicorn", "controltower.wsgi", "--bind", f"127.0.0.1:{port}"]
    args += [*options, "--log-level", "warning"]
    server = subprocess.Popen(args, cwd=ROOT, env={**server_env(engine), **env})
    for _ in range(300):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/api/openapi.json")
            if conn.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("gunicorn did not start")


def setup_django(engine, fresh=True):
    """Point Django at a (fresh, migrated) bench database for `engine`."""
    if fresh:
        reset_database(engine)
    os.environ.update(server_env(engine))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)  # production static storage


def run_per_engine(script, main):
    """`main(engine)` for the engine named on the command line; with none or both named,
    the script again per engine, each in a process of its own (Django is set up once)."""
    engines = [arg for arg in sys.argv[1:] if arg in ("sqlite", "postgresql")]
    if len(engines) == 1:
        main(engines[0])
        return
    print(f"machine: {machine()}", flush=True)
    for engine in engines or ["sqlite", "postgresql"]:
        subprocess.run([sys.executable, script, engine], check=True)


T0 = datetime(2026, 1, 1, tzinfo=UTC)


def session_events(session_id, owner, count, start, closed=False):
    """A realistic stream of `count` events: start, block/unblock pairs, reviews, close."""
    from sessions.domain.vocabulary import BLOCK, CLOSE, REVIEW, START, UNBLOCK
    from sessions.models import Event

    cycle = [
        (BLOCK, {"reason": "waiting for a review of the schema"}),
        (UNBLOCK, {"note": "apply the review comments"}),
        (REVIEW, {"note": "PR is up"}),
        (BLOCK, {"reason": "CI is red on main"}),
        (UNBLOCK, {}),
    ]
    rows = [
        Event(
            session=session_id,
            seq=1,
            type=START,
            timestamp=start,
            actor=owner,
            title=f"Work item {session_id}",
            note="draft the plan",
        )
    ]
    body = count - 2 if closed else count - 1
    for index in range(body):
        event_type, fields = cycle[index % len(cycle)]
        rows.append(
            Event(
                session=session_id,
                seq=index + 2,
                type=event_type,
                timestamp=start + timedelta(minutes=index + 1),
                actor=owner,
                **fields,
            )
        )
    if closed:
        rows.append(
            Event(
                session=session_id,
                seq=count,
                type=CLOSE,
                timestamp=start + timedelta(minutes=count),
                actor=owner,
                note="done",
            )
        )
    return rows


def seed(
    open_sessions,
    closed_sessions=0,
    events_per_open=20,
    events_per_closed=5,
    prefix="",
    settle=True,
):
    """Insert open and closed sessions in bulk (inserts only, like every write); then, with
    `settle`, gather statistics as autovacuum would."""
    from sessions.models import Event

    batch = []
    owners = [f"user{n}" for n in range(20)] + [f"agent-{n}" for n in range(20)]

    def flush():
        Event.objects.bulk_create(batch, batch_size=5000)
        batch.clear()

    for n in range(closed_sessions):
        start = T0 + timedelta(minutes=n)
        batch += session_events(f"{prefix}c{n}", owners[n % 40], events_per_closed, start, True)
        if len(batch) >= 50_000:
            flush()
    for n in range(open_sessions):
        start = T0 + timedelta(days=30, minutes=n)
        batch += session_events(f"{prefix}o{n}", owners[n % 40], events_per_open, start)
        if len(batch) >= 50_000:
            flush()
    flush()
    if settle:
        settle_after_bulk_load()


def settle_after_bulk_load():
    """What autovacuum does after a bulk load on PostgreSQL: statistics and the
    visibility map, without which the planner guesses blind and index-only scans read
    the heap."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE tower_event")


def timed(function, repeat=15, warmup=2):
    """Median and p90 wall time of `function()` in milliseconds."""
    for _ in range(warmup):
        function()
    samples = []
    for _ in range(repeat):
        begin = time.perf_counter()
        function()
        samples.append((time.perf_counter() - begin) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.9) - 1]


def percentile(samples, fraction):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def machine():
    return f"{platform.node()} · {os.cpu_count()} cores · Python {platform.python_version()}"


def report(title, rows, header):
    print(f"\n## {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")
    sys.stdout.flush()
