"""Benchmark: the `Stop` hook's cost against the transcript's length (issue 38).

    python bench/transcript_hook.py [sqlite] [postgresql]

`ct hook claude-code` for `Stop`, a new process each time as Claude Code runs it,
against a real gunicorn on loopback, RUNS runs, p50 and p95 from process start to exit;
before each run (outside the timing) Claude Code's transcript gains one reply, so every
run reads on and sends one `session_usage`. Two transcripts: 10 lines, and 100,000
lines (shaped as Claude Code writes them, a reply over two lines) after the hooks' first
read of it (timed once, apart). The goal: the long one ≤ 1.2× the short one.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agents import ct_env, tower
from append_http import PORT
from common import percentile, report, run_per_engine

from tests.support.ct_tools import CT, hook_payload, reply_line

RUNS = int(os.environ.get("BENCH_RUNS", "100"))
MODEL = "claude-opus-5"


def transcript(path: Path, lines: int) -> None:
    """`lines` lines of replies, each over two lines sharing its id."""
    with path.open("w") as out:
        for n in range(lines // 2):
            out.write(reply_line(f"msg_{n}", MODEL, input=10, output=1, cache_read=900))
            out.write(reply_line(f"msg_{n}", MODEL, input=10, output=30, cache_read=900))


def stop_times(token: str, lines: int) -> tuple[float, list[float]]:
    """(the first read's ms, each later run's ms) of the Stop hook on a transcript of
    `lines` lines."""
    home = Path(tempfile.mkdtemp(prefix="ct-bench-"))
    env = ct_env(home, f"http://127.0.0.1:{PORT}", token)
    session = f"bench-{lines}"
    path = home / f"{session}.jsonl"
    transcript(path, lines)
    hook = [CT, "hook", "claude-code"]

    def run(event: str) -> float:
        given = json.dumps(hook_payload(event, session, home, transcript_path=str(path)))
        begin = time.perf_counter()
        subprocess.run(hook, env=env, input=given, capture_output=True, text=True, check=True)
        return (time.perf_counter() - begin) * 1000

    run("SessionStart")
    first = run("Stop")
    times = []
    for n in range(RUNS):
        with path.open("a") as more:
            more.write(reply_line(f"later_{n}", MODEL, input=10, output=5))
        times.append(run("Stop"))
    return first, times


def main(engine: str) -> None:
    with tower(engine) as (_, token):
        bare = []
        for _ in range(RUNS):
            begin = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append((time.perf_counter() - begin) * 1000)
        rows = [("`python -c pass`", "", bare)]
        for lines in (10, 100_000):
            first, times = stop_times(token, lines)
            rows.append((f"Stop, transcript of {lines:,} lines", f"{first:.1f}", times))
    report(
        f"The Stop hook reading on in the transcript, {RUNS} runs, ms ({engine})",
        [
            (name, first, f"{statistics.median(t):.1f}", f"{percentile(t, 0.95):.1f}")
            for name, first, t in rows
        ],
        ["process", "first read", "p50", "p95"],
    )


if __name__ == "__main__":
    run_per_engine(__file__, main)
