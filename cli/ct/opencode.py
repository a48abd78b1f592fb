"""`ct hook opencode`: OpenCode's plugin (`ct.opencode_plugin`, which `ct hooks opencode
--install` writes) passes its events here, and this reports its session to the tower as
Claude Code's hooks do (docs/rules.md, "Every agent"; docs/agents.md has the facts about
its plugin, checked against OpenCode 1.18).

OpenCode has no command hooks: its plugins run in its own process. The plugin sends each
event as a hook input of ours, `{"hook_event_name", "session_id", "cwd", …}` with
OpenCode's names (`session.created`, `chat.message`, `tool.execute.before`,
`tool.execute.after`, `permission.asked`, `session.idle`, and `step.finish` for each
model step's tokens), which the adapter translates into Claude Code's words, as for
Gemini CLI: its tools `bash`, `write` and `edit` are `Bash`, `Write` and `Edit`, its
`filePath` is `file_path`. It has no session end: the turn's end stands.

Its answer is the plugin's to carry out: `{"decision": "deny", "reason": …}` refuses the
tool call (the plugin throws, and the model gets the reason as the tool's result);
`{"context": …}` is text the plugin gives the model with its next request (OpenCode's
system prompt).

Its spend is in its step events, which only the plugin sees: `step.finish` keeps each
step's tokens as a line of a file of its own in the state folder, which the hooks read
on from where they stopped, as a transcript (each step once, by its part id)."""

import io
import json
from pathlib import Path

from ct import agent_names, claude_code, files, hook_engine
from ct.hook_engine import Hook
from ct.transcript import add_counts, first_sight, whole

# OpenCode's events, by the Claude Code event of the same meaning (and the steps' own).
EVENTS = {
    "session.created": "SessionStart",
    "chat.message": "UserPromptSubmit",
    "tool.execute.before": "PreToolUse",
    "tool.execute.after": "PostToolUse",
    "permission.asked": "Notification",
    "session.idle": "Stop",
    "step.finish": "StepFinish",
}
# OpenCode's tools, by the Claude Code tool of the same meaning.
TOOLS = {"bash": "Bash", "write": "Write", "edit": "Edit", "read": "Read", "patch": "apply_patch"}
KEPT_STEPS = 256


def steps_file(session_id: str) -> str:
    """Where an OpenCode session's step tokens are kept, one JSON object a line."""
    return str(files.state_lines("opencode-steps", session_id))


def translate(payload: dict) -> dict:
    """The plugin's input in Claude Code's words."""
    event = payload.get("hook_event_name")
    said = dict(payload, hook_event_name=EVENTS.get(str(event), f"opencode:{event}"))
    if isinstance(payload.get("session_id"), str) and payload["session_id"]:
        said["transcript_path"] = steps_file(payload["session_id"])
    tool, given = payload.get("tool_name"), payload.get("tool_input")
    if isinstance(tool, str):
        said["tool_name"] = TOOLS.get(tool, tool)
    if isinstance(given, dict) and isinstance(given.get("filePath"), str):
        said["tool_input"] = {**given, "file_path": given["filePath"]}
    return said


def say(payload: dict, text: str, deny: bool = False) -> dict:
    """The answer the plugin carries out: refuse the tool call, or tell the model."""
    if deny and payload["hook_event_name"] == "PreToolUse":
        return {"decision": "deny", "reason": text}
    return {"context": text}


def on_step_finish(hook: Hook) -> dict | None:
    """Keep a model step's tokens for the usage read (its heartbeat or turn's end sends
    them)."""
    tokens, model = hook.payload.get("tokens"), hook.payload.get("model")
    if not isinstance(tokens, dict) or not isinstance(model, str) or not model:
        return None
    step = {"id": str(hook.payload.get("part_id") or ""), "model": model, "tokens": tokens}
    files.append_line(Path(hook.payload["transcript_path"]), json.dumps(step))
    return None


def count_line(line: bytes, reading: dict) -> None:
    """Count one kept step into `reading`'s totals (`transcript.read`'s `count`):
    OpenCode's `input` is the uncached input already; `reasoning` is billed as output."""
    try:
        step = json.loads(line)
    except ValueError:
        return
    tokens = step.get("tokens") if isinstance(step, dict) else None
    if not isinstance(tokens, dict) or not isinstance(step.get("model"), str):
        return
    if step.get("id") and not first_sight(reading, "steps", step["id"], KEPT_STEPS):
        return
    cache = tokens["cache"] if isinstance(tokens.get("cache"), dict) else {}
    added = [
        whole(tokens.get("input")),
        whole(tokens.get("output")) + whole(tokens.get("reasoning")),
        whole(cache.get("read")),
        whole(cache.get("write")),
    ]
    if any(added):
        add_counts(reading, step["model"], added)


HANDLERS = {
    **{
        ours: claude_code.HANDLERS[ours] for ours in EVENTS.values() if ours in claude_code.HANDLERS
    },
    "StepFinish": on_step_finish,
}

AGENT = hook_engine.Agent(
    "opencode",
    "oc",
    "SessionStart",
    say,
    HANDLERS,
    count_usage=count_line,
    title=agent_names.PROGRAM_NAMES["opencode"],
    translate=translate,
)


def hook(stdin: io.TextIOBase, stdout: io.TextIOBase) -> int:
    """Run one of OpenCode's plugin calls; always 0."""
    return hook_engine.run(AGENT, stdin, stdout)
