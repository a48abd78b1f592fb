"""What a headless agent's output (a dispatched run's log: its stdout and stderr) says of
its own conversation's id, which resumes it, and of its last answer, which closes its
session. Each agent prints its own: Claude Code one JSON result as its last line, Codex
and OpenCode a JSON object a line, Gemini CLI one JSON object over many lines, at its end.
Only the log's head and tail are read, so a long run costs no more than a short one."""

import json
from collections.abc import Iterator
from pathlib import Path

_TAIL_BYTES = 65536
_HEAD_LINES = 200


def _tail(log: Path) -> str:
    try:
        with log.open("rb") as source:
            source.seek(max(0, log.stat().st_size - _TAIL_BYTES))
            return source.read().decode("utf-8", "replace")
    except OSError:
        return ""


def last_line(log: Path, limit: int = 200) -> str:
    """The log's last line with something on it, cut to `limit` characters."""
    found = [line.strip() for line in _tail(log).splitlines() if line.strip()]
    return found[-1][:limit] if found else ""


def _objects(lines: list[str]) -> Iterator[dict]:
    for line in lines:
        if line.startswith("{"):
            try:
                found = json.loads(line)
            except ValueError:
                continue
            if isinstance(found, dict):
                yield found


def _tail_objects(log: Path) -> list[dict]:
    """The JSON objects of the log's tail, a line each, in order."""
    return list(_objects(_tail(log).splitlines()))


def _first_line(text: str, limit: int = 200) -> str:
    return text.strip().splitlines()[0][:limit] if text.strip() else ""


# Claude Code: `--output-format json`, its result the last line --------------------------


def claude_result(log: Path) -> dict:
    objects = _objects([last_line(log, _TAIL_BYTES)])
    return next(objects, {})


def claude_conversation(log: Path) -> str | None:
    found = claude_result(log).get("session_id")
    return found if isinstance(found, str) and found else None


def claude_answer(log: Path) -> str:
    """The first line of its result's `result`, else the output's last line."""
    result = claude_result(log).get("result")
    return _first_line(result) if isinstance(result, str) and result.strip() else last_line(log)


# Codex: `exec --json`, an event a line --------------------------------------------------


def codex_conversation(log: Path) -> str | None:
    """The thread its first `thread.started` names (a resumed run goes on in it)."""
    try:
        with log.open(encoding="utf-8", errors="replace") as source:
            head = [line for _, line in zip(range(_HEAD_LINES), source, strict=False)]
    except OSError:
        return None
    for event in _objects(head):
        if event.get("type") == "thread.started" and isinstance(event.get("thread_id"), str):
            return event["thread_id"]
    return None


def codex_answer(log: Path) -> str:
    said = [
        item.get("text")
        for event in _tail_objects(log)
        if event.get("type") == "item.completed"
        and isinstance(item := event.get("item"), dict)
        and item.get("type") == "agent_message"
    ]
    return _first_line(said[-1]) if said and isinstance(said[-1], str) else last_line(log)


# Gemini CLI: `-o json`, one object over many lines, at the end ---------------------------


def gemini_result(log: Path) -> dict:
    text = _tail(log)
    start = text.rfind("\n{")
    start = 0 if start < 0 and text.startswith("{") else start
    if start < 0:
        return {}
    try:
        found = json.loads(text[start:])
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def gemini_conversation(log: Path) -> str | None:
    found = gemini_result(log).get("session_id")
    return found if isinstance(found, str) and found else None


def gemini_answer(log: Path) -> str:
    said = gemini_result(log).get("response")
    return _first_line(said) if isinstance(said, str) and said.strip() else last_line(log)


# OpenCode: `run --format json`, an event a line, each naming its session ------------------


def opencode_conversation(log: Path) -> str | None:
    named = [e["sessionID"] for e in _tail_objects(log) if isinstance(e.get("sessionID"), str)]
    return named[-1] if named else None


def opencode_answer(log: Path) -> str:
    said = [
        part.get("text")
        for event in _tail_objects(log)
        if event.get("type") == "text" and isinstance(part := event.get("part"), dict)
    ]
    return _first_line(said[-1]) if said and isinstance(said[-1], str) else last_line(log)
