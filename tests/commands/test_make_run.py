"""`make run`, as a newcomer types it: migrate, the first admin, static files, the web
server and the webhook worker, on the port asked for (a shared machine's first need)."""

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import free_port
from tests.support.http import http_request

ROOT = Path(__file__).resolve().parents[2]


def test_make_run_serves_on_the_port_given(tmp_path):
    port = free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "DATABASE_"))
    }
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"  # not the project's own
    running = subprocess.Popen(
        ["make", "--no-print-directory", "run", f"PORT={port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline, answer = time.monotonic() + 90, None
        while time.monotonic() < deadline and running.poll() is None:
            try:
                answer = http_request(f"http://127.0.0.1:{port}", "GET", "/accounts/login/")
                break
            except OSError:
                time.sleep(0.3)
        assert answer is not None and answer.status == 200, running.poll()
        workers = subprocess.run(
            ["pgrep", "-s", str(os.getpgid(running.pid)), "-f", "manage.py deliver"],
            capture_output=True,
            text=True,
        )
        assert workers.stdout.strip(), "the webhook worker runs beside the server"
    finally:
        os.killpg(running.pid, signal.SIGTERM)
        running.wait(timeout=30)
