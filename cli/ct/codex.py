"""`ct hook codex`: Codex CLI's hooks report its session to the tower as Claude Code's do
(docs/rules.md, "Every agent"; docs/agents.md has the facts about its hooks, checked
against Codex 0.169).

Codex's hook input and output are shaped as Claude Code's: the same `session_id`,
`transcript_path`, `cwd` and `hook_event_name`, its shell tool arriving as `Bash` with a
`command`, a refusal as `hookSpecificOutput.permissionDecision: "deny"` and text for the
model as `additionalContext`. So its events are Claude Code's handlers, but for these:
- it has no Notification: `PermissionRequest` (it waits for a person to allow a tool
  call) blocks the session, saying which;
- its spend is in its rollout file (`ct.codex_rollout`);
- its sessions are `cx-…`."""

import io

from ct import agent_names, claude_code, codex_rollout, hook_engine
from ct.hook_engine import Hook


def on_permission_request(hook: Hook) -> dict | None:
    asked = hook.tool_call() or "a tool call"
    claude_code.block(hook, f"permission asked: {asked}")
    return None


HANDLERS = {
    **{
        event: handler for event, handler in claude_code.HANDLERS.items() if event != "Notification"
    },
    "PermissionRequest": on_permission_request,
}
AGENT = hook_engine.Agent(
    "codex",
    "cx",
    "SessionStart",
    claude_code.say,
    HANDLERS,
    count_usage=codex_rollout.count_line,
    title=agent_names.PROGRAM_NAMES["codex"],
)


def hook(stdin: io.TextIOBase, stdout: io.TextIOBase) -> int:
    """Run one of Codex's hook calls; always 0."""
    return hook_engine.run(AGENT, stdin, stdout)
