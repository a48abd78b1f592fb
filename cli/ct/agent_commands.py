"""The agents `ct dispatch` runs headless (DESIGN.md, "Running the plan"): each one's
command line, with `PROMPT` standing for the prompt's text and `RESUME` for the words
that resume the agent's own conversation (nothing on a first run).

`CT_AGENT_ARGS` adds words after an agent's own: the flags that let an agent act
unattended are the user's to give, and the tower never grants them itself."""

import json
import os
import shlex
from pathlib import Path

from ct import files, hook_settings, workspace

PROMPT, RESUME = "{prompt}", "{resume}"


def claude_code() -> list[str]:
    """`claude -p`, with `ct`'s hooks from a settings file of the dispatcher's own: the
    repository need not have them."""
    settings = files.state_file("dispatch", "claude-code-settings")
    block = hook_settings.settings_block("claude-code", hook_settings.hook_command("claude-code"))
    files.write_private(settings, json.dumps(block))
    words = ["claude", "-p", PROMPT, "--output-format", "json", "--settings", str(settings)]
    return [*words, RESUME, *shlex.split(os.environ.get("CT_AGENT_ARGS", ""))]


AGENTS = {"claude-code": claude_code}


def resume_words(log: Path) -> list[str] | None:
    """The words that resume the conversation a run's log ends on (its JSON result's
    session id), or None when it names none."""
    conversation = workspace.final_result(log).get("session_id")
    return ["--resume", conversation] if isinstance(conversation, str) else None


def filled(command: list[str], prompt: str, resume: list[str]) -> list[str]:
    """The command's words with the prompt and the resume's words in place."""
    return [
        word
        for given in command
        for word in ([prompt] if given == PROMPT else resume if given == RESUME else [given])
    ]
