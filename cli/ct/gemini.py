"""`ct hook gemini`: Gemini CLI's hooks report its session to the tower as Claude Code's
do (docs/rules.md, "Every agent"; docs/agents.md has the facts about its hooks, checked
against Gemini CLI 0.61, and its own reference is the package's
`bundle/docs/hooks/reference.md`).

Gemini CLI's input carries the same `session_id`, `transcript_path` and `cwd`, but names
its events and tools its own way. So the adapter translates the input into Claude Code's
words and runs Claude Code's handlers:
- `BeforeAgent` is a person's prompt, `BeforeTool`/`AfterTool` the tool calls,
  `AfterAgent` the turn's end; `SessionStart`, `Notification` (a tool waiting for a
  person's permission) and `SessionEnd` keep their names;
- its shell tool `run_shell_command` is `Bash` (the same `command`), its writes
  `write_file` and `replace` are `Write` and `Edit` (the same `file_path`);
- a prompt after a SessionStart that added context begins with that context in
  `<hook_context>…</hook_context>`: the person's words come after it.

Its output: a refused tool call is `{"decision": "deny", "reason": …}` (the model sees
"Tool execution blocked: …"); other text goes in `hookSpecificOutput.additionalContext`,
which SessionStart, BeforeAgent and AfterTool pass to the model. BeforeTool has no such
field: a warning that lets the tool run (a reservation under `warn`) is shown to the
person as `systemMessage` instead. Its spend is in its chat file (`ct.gemini_chat`); its
sessions are `gm-…`."""

import io
import re

from ct import agent_names, claude_code, gemini_chat, hook_engine

# Gemini CLI's events, by the Claude Code event of the same meaning.
EVENTS = {
    "SessionStart": "SessionStart",
    "BeforeAgent": "UserPromptSubmit",
    "BeforeTool": "PreToolUse",
    "AfterTool": "PostToolUse",
    "Notification": "Notification",
    "AfterAgent": "Stop",
    "SessionEnd": "SessionEnd",
}
_GEMINI_EVENT = {ours: theirs for theirs, ours in EVENTS.items()}
# Gemini CLI's tools, by the Claude Code tool of the same inputs.
TOOLS = {"run_shell_command": "Bash", "write_file": "Write", "replace": "Edit"}
_HOOK_CONTEXT = re.compile(r"\A\s*<hook_context>.*?</hook_context>\s*", re.DOTALL)


def translate(payload: dict) -> dict:
    """Gemini CLI's hook input in Claude Code's words."""
    event = payload.get("hook_event_name")
    said = dict(payload, hook_event_name=EVENTS.get(str(event), f"gemini:{event}"))
    tool = payload.get("tool_name")
    if isinstance(tool, str):
        said["tool_name"] = TOOLS.get(tool, tool)
    prompt = payload.get("prompt")
    if isinstance(prompt, str):
        said["prompt"] = _HOOK_CONTEXT.sub("", prompt, count=1)
    return said


def say(payload: dict, text: str, deny: bool = False) -> dict:
    """The hook's output passing `text` to Gemini CLI, as this event can."""
    event = payload["hook_event_name"]
    if event == "PreToolUse":
        return {"decision": "deny", "reason": text} if deny else {"systemMessage": text}
    return {
        "hookSpecificOutput": {"hookEventName": _GEMINI_EVENT[event], "additionalContext": text}
    }


AGENT = hook_engine.Agent(
    "gemini",
    "gm",
    "SessionStart",
    say,
    claude_code.HANDLERS,
    count_usage=gemini_chat.count_line,
    ended={
        "exit": "Gemini CLI exited",
        "clear": "the conversation was cleared (/clear)",
        "logout": "the person logged out of Gemini CLI",
        "prompt_input_exit": "the person left Gemini CLI",
    },
    title=agent_names.PROGRAM_NAMES["gemini"],
    translate=translate,
)


def hook(stdin: io.TextIOBase, stdout: io.TextIOBase) -> int:
    """Run one of Gemini CLI's hook calls; always 0."""
    return hook_engine.run(AGENT, stdin, stdout)
