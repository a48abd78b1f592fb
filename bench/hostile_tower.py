"""Benchmark: a Claude Code hook against a tower that misbehaves (issue 36).

    python bench/hostile_tower.py

Wall time of `ct hook claude-code` (a new process each run, as Claude Code runs it, the
interpreter's start included), RUNS runs per tower and event: a tower that dribbles its
answer a byte every 0.4 s, one that accepts and never answers, one that refuses
connections (nothing listens), and a proxy's 404 page. The events: SessionStart (a POST
through the spool) and PreToolUse (a GET of the session's view). The goal: the maximum
of every row at most 2 s. No database: the towers are socket servers on loopback.
"""

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import machine, report  # noqa: E402

from tests.support.bad_towers import BadTower  # noqa: E402
from tests.support.ct_tools import CT, ct_env, end_flushers, hook_payload  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "20"))


def refusing_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"  # closed again: nothing listens


def hook_ms(env: dict, event: str, cwd: Path) -> float:
    stdin = json.dumps(hook_payload(event, "bench-hostile", cwd))
    began = time.perf_counter()
    subprocess.run(
        [CT, "hook", "claude-code"],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return (time.perf_counter() - began) * 1000


def measure(name: str, url: str, rows: list) -> None:
    for event in ("SessionStart", "PreToolUse"):
        samples = []
        for _ in range(RUNS):
            with tempfile.TemporaryDirectory() as home:
                env = ct_env(Path(home), url, "ct_bench")
                cwd = Path(home)
                if event == "PreToolUse":  # a session this hook started (spooled)
                    subprocess.run(
                        [CT, "hook", "claude-code"],
                        input=json.dumps(hook_payload("SessionStart", "bench-hostile", cwd)),
                        env=env,
                        capture_output=True,
                        text=True,
                        check=True,
                    )
                samples.append(hook_ms(env, event, cwd))
                end_flushers(home)
        rows.append(
            [
                name,
                event,
                RUNS,
                f"{statistics.median(samples):.0f}",
                f"{max(samples):.0f}",
                "yes" if max(samples) <= 2000 else "NO",
            ]
        )


def main() -> None:
    print(f"machine: {machine()}", flush=True)
    rows: list = []
    for behaviour in ("dribbling", "silent", "proxy_404"):
        with BadTower(behaviour) as tower:
            measure(behaviour, tower.url, rows)
    measure("refusing", refusing_url(), rows)
    report(
        "A hook's wall time against a tower that misbehaves",
        rows,
        ["tower", "event", "runs", "median ms", "max ms", "≤ 2 s"],
    )


if __name__ == "__main__":
    main()
