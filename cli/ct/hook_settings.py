"""The hooks' block for Claude Code's settings: printed, or merged into a project's
settings file (`ct hooks claude-code [--install [--shared]]`)."""

import json
import shutil
import sys
from pathlib import Path

from ct import files
from ct.claude_code import EVENTS

# The command a team's shared settings run: `ct` from each machine's PATH.
PORTABLE_COMMAND = "ct hook claude-code"


def hook_command() -> str:
    """The command Claude Code runs: this `ct`, by its full path when it can be found."""
    found = shutil.which("ct") or (sys.argv[0] if Path(sys.argv[0]).name == "ct" else None)
    return f"{Path(found).resolve()} hook claude-code" if found else PORTABLE_COMMAND


def settings_block(command: str) -> dict:
    entry = {"type": "command", "command": command, "timeout": 5}
    tool_events = ("PreToolUse", "PostToolUse")
    return {
        "hooks": {
            event: [
                {"matcher": "*", "hooks": [entry]} if event in tool_events else {"hooks": [entry]}
            ]
            for event in EVENTS
        }
    }


def install(block: dict, settings: str) -> Path:
    """Merge `block` into the settings file, keeping what is there: a hook already
    holding the same command is not added twice."""
    path = Path(settings)
    existing = files.read_json(path) if path.exists() else {}
    if path.exists() and not existing and path.read_text().strip():
        raise ValueError(f"{path} is not a JSON object; left as it was")
    hooks = existing.setdefault("hooks", {})
    for event, groups in block["hooks"].items():
        present = hooks.setdefault(event, [])
        commands = {h.get("command") for g in present for h in g.get("hooks", [])}
        for group in groups:
            if not {h["command"] for h in group["hooks"]} & commands:
                present.append(group)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(existing, indent=2) + "\n")
    return path
