"""Benchmark: the agent's side. What a Claude Code hook and `ct wait` cost, against a real
gunicorn on loopback.

    python bench/agents.py [sqlite] [postgresql]

1. Hook wall time per event, from process start to exit (`ct hook claude-code`, a new
   process each time, as Claude Code runs it), RUNS runs each, p50 and p95; beside it a
   bare `python -c pass` with the same interpreter in the same run, so the rest is what
   `ct` itself costs. The events: a message check with nothing waiting (PreToolUse: one
   GET), a heartbeat that is sent (PostToolUse, its throttle reset before each run
   outside the timing: one POST) and a throttled heartbeat (PostToolUse within the
   minute). The throttled one runs against a counting listener that forwards to the
   tower: it must see no connection at all.
2. `ct wait --until unblocked` at its default interval: from the unblock's answer (its
   commit) to `ct wait` exiting, WAITS times, p50 and p95; the unblock lands at a random
   moment of the wait's polling cycle. And what one waiting agent costs the server:
   requests per minute, counted by the same listener over WATCH seconds.
"""

import contextlib
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from append_http import PORT, start_server
from common import percentile, report, run_per_engine, setup_django

from tests.support.ct_tools import CT, hook_payload
from tests.support.ct_tools import ct_env as tests_ct_env

RUNS = int(os.environ.get("BENCH_RUNS", "200"))
WAITS = int(os.environ.get("BENCH_WAITS", "20"))
WATCH = 30.0
SID = "bench-claude-session"


class CountingListener:
    """A loopback port that forwards every connection to the tower and counts them (each
    request of `ct` is a connection of its own)."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.connections = 0
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)


def ct_env(home: Path, url: str, token: str) -> dict:
    """The tests' `ct` environment (its own HOME and state, the tower), as on an agent's
    machine: Python keeps the compiled modules (this VM's environment turns that off,
    which would make every run compile `ct` again)."""
    env = tests_ct_env(home, url, token)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def payload(event: str, cwd: Path) -> str:
    """A hook input shaped as Claude Code's published types define it (the tests' own)."""
    return json.dumps(hook_payload(event, SID, cwd))


def wall_ms(args: list[str], env: dict, stdin: str | None = None, before=None) -> list[float]:
    times = []
    for _ in range(RUNS):
        if before:
            before()
        begin = time.perf_counter()
        subprocess.run(args, env=env, input=stdin, capture_output=True, text=True, check=True)
        times.append((time.perf_counter() - begin) * 1000)
    return times


def hook_times(engine: str, token: str) -> None:
    home = Path(tempfile.mkdtemp(prefix="ct-bench-"))
    env = ct_env(home, f"http://127.0.0.1:{PORT}", token)
    hook = [CT, "hook", "claude-code"]
    subprocess.run(hook, env=env, input=payload("SessionStart", home), text=True, check=True)
    record = home / "state" / "control-tower" / "claude-code" / f"{SID}.json"

    def unthrottled() -> None:
        found = json.loads(record.read_text())
        found["last_heartbeat"] = 0
        record.write_text(json.dumps(found))

    rows = [("`python -c pass`", wall_ms([sys.executable, "-c", "pass"], env))]
    rows.append(
        (
            "message check (PreToolUse, nothing waiting)",
            wall_ms(hook, env, payload("PreToolUse", home)),
        )
    )
    rows.append(
        (
            "heartbeat sent (PostToolUse)",
            wall_ms(hook, env, payload("PostToolUse", home), unthrottled),
        )
    )
    listener = CountingListener(PORT)
    counted = ct_env(home, f"http://127.0.0.1:{listener.port}", token)
    subprocess.run(hook, env=counted, input=payload("PostToolUse", home), text=True, check=True)
    listener.connections = 0  # the one heartbeat just sent; now every call is throttled
    rows.append(
        ("throttled heartbeat (PostToolUse)", wall_ms(hook, counted, payload("PostToolUse", home)))
    )
    bare = statistics.median(rows[0][1])
    report(
        f"Hook wall time, {RUNS} runs each, ms ({engine})",
        [
            (
                name,
                f"{statistics.median(t):.1f}",
                f"{percentile(t, 0.95):.1f}",
                f"{statistics.median(t) - bare:+.1f}",
            )
            for name, t in rows
        ],
        ["process", "p50", "p95", "p50 beyond python -c pass"],
    )
    print(
        f"\nconnections the {RUNS} throttled heartbeats made to the tower: {listener.connections}"
    )


def wait_latency(engine: str, token: str, user) -> None:
    from sessions.rules.append import append_event

    home = Path(tempfile.mkdtemp(prefix="ct-bench-"))
    env = ct_env(home, f"http://127.0.0.1:{PORT}", token)
    latencies = []
    for n in range(WAITS):
        session = f"wait-{n}"
        env["CT_SESSION"] = session
        subprocess.run(
            [CT, "start", "Wait", "--id", session], env=env, check=True, capture_output=True
        )
        subprocess.run([CT, "block", "which?"], env=env, check=True, capture_output=True)
        waiting = subprocess.Popen(
            [CT, "wait", "--until", "unblocked"], env=env, stdout=subprocess.PIPE
        )
        time.sleep(1.0 + random.uniform(0, 2.0))  # somewhere in its polling cycle
        append_event(session, "session_unblock", {"note": "this one"}, user=user)
        committed = time.perf_counter()
        waiting.wait(timeout=30)
        latencies.append((time.perf_counter() - committed) * 1000)
    listener = CountingListener(PORT)
    env.update(CT_URL=f"http://127.0.0.1:{listener.port}", CT_SESSION="wait-0")
    subprocess.run([CT, "block", "again?"], env=env, check=True, capture_output=True)
    listener.connections = 0
    subprocess.run(
        [CT, "wait", "--until", "unblocked", "--timeout", str(WATCH)], env=env, capture_output=True
    )
    per_minute = listener.connections * 60 / WATCH
    report(
        f"`ct wait` wake-up, default interval, {WAITS} waits, ms ({engine})",
        [
            (
                f"{statistics.median(latencies):.0f}",
                f"{percentile(latencies, 0.95):.0f}",
                f"{per_minute:.0f}",
            )
        ],
        ["p50", "p95", "requests a minute, one waiting agent"],
    )


@contextlib.contextmanager
def tower(engine: str):
    """A fresh bench database for `engine` served by gunicorn on loopback: (the user
    `bench`, a token of theirs) while it runs."""
    setup_django(engine)
    from django.contrib.auth.models import User

    from sessions.rules.tokens import create_token

    user = User.objects.create_user("bench")
    _, token = create_token(user, "bench")
    server = start_server(engine)
    try:
        yield user, token
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(engine: str) -> None:
    with tower(engine) as (user, token):
        hook_times(engine, token)
        wait_latency(engine, token, user)


if __name__ == "__main__":
    run_per_engine(__file__, main)
