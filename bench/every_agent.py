"""Benchmark: every agent's hook (issue 54), against a real gunicorn on loopback.

    python bench/every_agent.py [sqlite] [postgresql]

1. The hook before a tool call, per agent (`ct hook claude-code|codex|gemini|opencode`,
   a new process each time, as the agent or OpenCode's plugin runs it), RUNS runs each,
   p50 and p95 from process start to exit, beside a bare `python -c pass` in the same
   run. The call is a write in a checkout whose repository has reservations, so every
   check runs: the messages and fences (one GET of the session), the budget, and the
   reservations (from the copy at most 15 s old). The goal: p95 ≤ 60 ms quiet.
2. The usage read, per agent: the turn's end (Stop, AfterAgent, `session.idle`) reading
   on in the agent's own record of 10 lines and of 100,000 lines (the first read of it
   timed apart), one new line before each run, so that each run sends one
   `session_usage`. The goal: the long record ≤ 1.2× the short one.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agents import ct_env, tower
from append_http import PORT
from common import percentile, report, run_per_engine

from tests.support.ct_tools import CT, reply_line
from tests.support.git_repo import checkout, commit

RUNS = int(os.environ.get("BENCH_RUNS", "60"))
READS = int(os.environ.get("BENCH_READS", "30"))


def _codex_line(n: int) -> str:
    total = {"input_tokens": 1000 * (n + 1), "cached_input_tokens": 0, "output_tokens": n + 1}
    info = {"total_token_usage": total}
    return json.dumps({"type": "event_msg", "payload": {"type": "token_count", "info": info}})


def _gemini_line(n: int) -> str:
    tokens = {"input": 100, "output": 5, "cached": 40, "thoughts": 0, "tool": 0}
    return json.dumps({"id": f"r{n}", "type": "gemini", "model": "gemini-x", "tokens": tokens})


def _opencode_line(n: int) -> str:
    tokens = {"input": 60, "output": 5, "reasoning": 0, "cache": {"read": 40, "write": 0}}
    return json.dumps({"id": f"prt_{n}", "model": "gpt-x", "tokens": tokens})


def _claude_line(n: int) -> str:
    return reply_line(f"msg_{n}", "claude-opus-5", input=10, output=5).rstrip("\n")


# Per agent: its events (start, before a tool, the turn's end), how its write names the
# file, and a line of its own record of spend.
AGENTS: dict[str, tuple[tuple[str, str, str], dict, Callable[[int], str]]] = {
    "claude-code": (
        ("SessionStart", "PreToolUse", "Stop"),
        {"tool_name": "Write", "tool_input": {"file_path": "src/app.py", "content": "x"}},
        _claude_line,
    ),
    "codex": (
        ("SessionStart", "PreToolUse", "Stop"),
        {"tool_name": "apply_patch", "tool_input": {"command": "*** Add File: src/app.py\n+x\n"}},
        _codex_line,
    ),
    "gemini": (
        ("SessionStart", "BeforeTool", "AfterAgent"),
        {"tool_name": "write_file", "tool_input": {"file_path": "src/app.py", "content": "x"}},
        _gemini_line,
    ),
    "opencode": (
        ("session.created", "tool.execute.before", "session.idle"),
        {"tool_name": "write", "tool_input": {"filePath": "src/app.py", "content": "x"}},
        _opencode_line,
    ),
}


def _timed(env: dict, agent: str, payload: dict) -> float:
    begin = time.perf_counter()
    subprocess.run(
        [CT, "hook", agent],
        env=env,
        input=json.dumps(payload).encode(),
        capture_output=True,
        check=True,
    )
    return (time.perf_counter() - begin) * 1000


class Run:
    """One agent session's hooks in a checkout of acme/shop, in a HOME of its own."""

    def __init__(self, token: str, agent: str, name: str) -> None:
        self.agent, self.name = agent, name
        self.home = Path(tempfile.mkdtemp(prefix="ct-bench-"))
        self.env = ct_env(self.home, f"http://127.0.0.1:{PORT}", token)
        self.folder = checkout(self.home / "shop")
        commit(self.folder)
        self.record = self.home / "record.jsonl"
        if agent == "opencode":  # its record is the one the hooks keep of its steps
            from ct import opencode

            os.environ["XDG_STATE_HOME"] = self.env["XDG_STATE_HOME"]
            self.record = Path(opencode.steps_file(name))
        self.record.parent.mkdir(parents=True, exist_ok=True)
        self.record.touch()

    def call(self, event: str, **fields: object) -> float:
        payload = {
            "session_id": self.name,
            "cwd": str(self.folder),
            "transcript_path": str(self.record),
            "hook_event_name": event,
            **fields,
        }
        return _timed(self.env, self.agent, payload)


def before_tool_times(token: str, agent: str) -> list[float]:
    (start, before, _), write, _ = AGENTS[agent]
    run = Run(token, agent, f"before-{agent}")
    run.call(start)
    return [run.call(before, **write) for _ in range(RUNS)]


def read_times(token: str, agent: str, lines: int) -> tuple[float, list[float]]:
    (start, _, end), _, line = AGENTS[agent]
    run = Run(token, agent, f"read-{agent}-{lines}")
    with run.record.open("w") as out:
        if agent == "codex":
            out.write(json.dumps({"type": "turn_context", "payload": {"model": "gpt-x"}}) + "\n")
        out.writelines(line(n) + "\n" for n in range(lines))
    run.call(start)
    first = run.call(end)
    times = []
    for n in range(READS):
        with run.record.open("a") as more:
            more.write(line(lines + n) + "\n")
        times.append(run.call(end))
    return first, times


def _reserved(user) -> None:
    """A plan on acme/shop whose running node holds a path beside the one written."""
    from sessions.domain.vocabulary import PLAN_CREATE, START
    from sessions.rules.append import append_event

    nodes = [{"key": "billing", "title": "Billing", "paths": ["src/billing"]}]
    append_event(
        "p", PLAN_CREATE, {"title": "Shop", "repo": "acme/shop", "nodes": nodes}, user=user
    )
    append_event("holder", START, {"plan": "p", "node": "billing"}, user=user)


def main(engine: str) -> None:
    with tower(engine) as (user, token):
        _reserved(user)
        bare = []
        for _ in range(RUNS):
            begin = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append((time.perf_counter() - begin) * 1000)
        rows = [("`python -c pass`", bare)]
        rows += [
            (f"`ct hook {agent}` before a write", before_tool_times(token, agent))
            for agent in AGENTS
        ]
        report(
            f"The hook before a tool call, every check in it, {RUNS} runs, ms ({engine})",
            [
                (name, f"{statistics.median(t):.1f}", f"{percentile(t, 0.95):.1f}")
                for name, t in rows
            ],
            ["process", "p50", "p95"],
        )
        reads = []
        for agent in AGENTS:
            short_first, short = read_times(token, agent, 10)
            long_first, long = read_times(token, agent, 100_000)
            ratio = statistics.median(long) / statistics.median(short)
            reads.append(
                (
                    agent,
                    f"{statistics.median(short):.1f} ({min(short):.1f}–{max(short):.1f})",
                    f"{statistics.median(long):.1f} ({min(long):.1f}–{max(long):.1f})",
                    f"{ratio:.2f}×",
                    f"{short_first:.1f} / {long_first:.1f}",
                )
            )
        report(
            f"The turn's end reading on in each agent's record, {READS} runs, ms ({engine})",
            reads,
            [
                "agent",
                "10 lines: median (range)",
                "100,000 lines",
                "ratio",
                "first read: 10 / 100k",
            ],
        )


if __name__ == "__main__":
    run_per_engine(__file__, main)
