"""Running the `ct` the venv installed (cli/, `pip install ./cli`) as its own process,
against a live server over real HTTP, with a home of its own for its files."""

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

CT = str(Path(sys.executable).parent / "ct")


def ct_env(home: Path, url: str | None, token: str | None, **extra: str) -> dict:
    """The environment of a `ct` process: its own HOME and XDG folders, the tower."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CT_", "XDG_", "DJANGO_", "DATABASE_"))
    }
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CONFIG_HOME=str(home / "config"),
    )
    if url:
        env["CT_URL"] = url
    if token:
        env["CT_TOKEN"] = token
    env.update(extra)
    return env


def run_ct(
    env: dict, *args: str, stdin: str | None = None, timeout: float = 60, cwd: Path | None = None
):
    return subprocess.run(
        [CT, *args], env=env, input=stdin, capture_output=True, text=True, timeout=timeout, cwd=cwd
    )


def run_hook(env: dict, payload: dict, timeout: float = 30):
    """`ct hook claude-code` with `payload` on stdin, as Claude Code runs it."""
    return run_ct(env, "hook", "claude-code", stdin=json.dumps(payload), timeout=timeout)


def hook_payload(event: str, session_id: str, cwd: Path, **fields) -> dict:
    """A hook input as `@anthropic-ai/claude-agent-sdk`'s types define it: `BaseHookInput`
    (session_id, transcript_path, cwd, permission_mode) and the event's own fields."""
    base = {
        "session_id": session_id,
        "transcript_path": str(cwd / f"{session_id}.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": event,
    }
    return {**base, **EVENT_FIELDS.get(event, {}), **fields}


# Each event's own fields, with values of the types the SDK declares.
EVENT_FIELDS = {
    "SessionStart": {"source": "startup", "model": "claude-sonnet-4-5"},
    "UserPromptSubmit": {"prompt": "go on", "source": "user"},
    "PreToolUse": {
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_01",
    },
    "PostToolUse": {
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_response": {"stdout": "README.md", "stderr": "", "interrupted": False},
        "tool_use_id": "toolu_01",
        "duration_ms": 12,
    },
    "Notification": {
        "message": "Claude needs your permission to use Bash",
        "title": "Permission needed",
        "notification_type": "permission_prompt",
    },
    "Stop": {"stop_hook_active": False, "last_assistant_message": "Done."},
    "SessionEnd": {"reason": "prompt_input_exit"},
}


def flushers(under: str | Path = "/") -> list[int]:
    """The pids of the background flushers (`python -m ct.flusher`) running now whose
    state folder is under `under` (a test's, or a test run's: runs side by side on one
    machine must not see, or end, each other's)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
            environment = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"ct.flusher" not in words:
            continue
        state = next(
            (v.split(b"=", 1)[1].decode() for v in environment if v.startswith(b"XDG_STATE_HOME=")),
            "",
        )
        if state.startswith(str(under)):
            found.append(int(entry.name))
    return found


def end_flushers(under: str | Path) -> None:
    """End the flushers a test's hooks started under `under` (they would retry for a day)."""
    for pid in flushers(under):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


def reply_line(reply, model, input=0, output=0, cache_read=0, cache_write=0, text="…"):
    """An assistant line as Claude Code writes one: the reply's id, model and usage, and
    last the line's own uuid and time."""
    usage = {
        "input_tokens": input,
        "output_tokens": output,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_write,
        "service_tier": "standard",
    }
    message = {"id": reply, "type": "message", "role": "assistant", "model": model}
    message |= {"content": [{"type": "text", "text": text}], "usage": usage}
    entry = {
        "type": "assistant",
        "uuid": f"u-{reply}-{output}",
        "sessionId": "s",
        "message": message,
    }
    return json.dumps(entry) + "\n"
