"""The agents `ct dispatch` runs headless (docs/rules.md, "Running the plan", and v5 "Every
agent"): each one's command line, with `PROMPT` standing for the prompt's text and
`RESUME` for the words that resume the agent's own conversation (nothing on a first
run); what its environment needs for `ct`'s hooks; and how its output says its own
conversation's id and its last answer.

| agent | command | `ct`'s hooks, without touching the person's own settings | resumed by |
| --- | --- | --- | --- |
| Claude Code | `claude -p … --output-format json` | `--settings FILE` | `--resume ID` |
| Codex | `codex exec --json …` | `-c hooks.EVENT=[…]` | `codex exec resume ID …` |
| Gemini CLI | `gemini -p … -o json` | `GEMINI_CLI_SYSTEM_DEFAULTS_PATH=FILE` | `--resume ID` |
| OpenCode | `opencode run --format json …` | `OPENCODE_CONFIG_DIR=DIR` (plugin) | `--session ID` |

Codex runs a hook from its configuration only once it is trusted; the dispatcher passes
`--dangerously-bypass-hook-trust` so that its own hooks run (which trusts the project's
hooks too). Beyond that, `CT_AGENT_ARGS` adds words after an agent's own: the flags that
let an agent act unattended (`--allowedTools`, Codex's sandbox, Gemini's
`--approval-mode`) are the user's to give, and the tower never grants them itself."""

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ct import environment, files, hook_settings, opencode_plugin, run_logs

PROMPT, RESUME = "{prompt}", "{resume}"


@dataclass(frozen=True)
class Headless:
    """An agent as `ct dispatch` runs it."""

    words: list[str]  # its command line, with PROMPT and RESUME in place
    env: dict[str, str] = field(default_factory=dict)  # what it needs for `ct`'s hooks
    # The words resuming the conversation its log ends on, or None when it names none.
    resume: Callable[[Path], list[str] | None] = lambda log: None
    answer: Callable[[Path], str] = run_logs.last_line  # what it said last


def _given_args() -> list[str]:
    return shlex.split(environment.agent_args())


def _resume_with(flag: str, reader: Callable[[Path], str | None]) -> Callable:
    def resume(log: Path) -> list[str] | None:
        conversation = reader(log)
        return [*flag.split(), conversation] if conversation else None

    return resume


def claude_code() -> Headless:
    """`claude -p`, with `ct`'s hooks from a settings file of the dispatcher's own: the
    repository need not have them."""
    settings = files.state_file("dispatch", "claude-code-settings")
    block = hook_settings.settings_block("claude-code", hook_settings.hook_command("claude-code"))
    files.write_private(settings, json.dumps(block))
    words = ["claude", "-p", PROMPT, "--output-format", "json", "--settings", str(settings)]
    return Headless(
        [*words, RESUME, *_given_args()],
        resume=_resume_with("--resume", run_logs.claude_conversation),
        answer=run_logs.claude_answer,
    )


def codex() -> Headless:
    """`codex exec --json`, its hooks given as configuration overrides (`-c`)."""
    block = hook_settings.settings_block("codex", hook_settings.hook_command("codex"))
    overrides = [
        word
        for event, groups in block["hooks"].items()
        for word in ("-c", f"hooks.{event}={_toml(groups)}")
    ]
    flags = ["--json", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", *overrides]
    return Headless(
        ["codex", "exec", RESUME, *flags, *_given_args(), PROMPT],
        resume=_resume_with("resume", run_logs.codex_conversation),
        answer=run_logs.codex_answer,
    )


def gemini() -> Headless:
    """`gemini -p`, its hooks in a system-defaults file of the dispatcher's own (beneath
    the person's own settings, which keep every hook of theirs)."""
    defaults = files.state_file("dispatch", "gemini-settings")
    block = hook_settings.settings_block("gemini", hook_settings.hook_command("gemini"))
    files.write_private(defaults, json.dumps(block))
    return Headless(
        ["gemini", "-p", PROMPT, "-o", "json", RESUME, *_given_args()],
        env={"GEMINI_CLI_SYSTEM_DEFAULTS_PATH": str(defaults)},
        resume=_resume_with("--resume", run_logs.gemini_conversation),
        answer=run_logs.gemini_answer,
    )


def opencode() -> Headless:
    """`opencode run`, its plugin in a configuration folder of the dispatcher's own."""
    folder = files.state_home() / "dispatch" / "opencode"
    plugin = folder / "plugins" / "control-tower.js"
    files.write_private(plugin, opencode_plugin.source(hook_settings.hook_words("opencode")))
    return Headless(
        ["opencode", "run", "--format", "json", RESUME, *_given_args(), PROMPT],
        env={"OPENCODE_CONFIG_DIR": str(folder)},
        resume=_resume_with("--session", run_logs.opencode_conversation),
        answer=run_logs.opencode_answer,
    )


AGENTS: dict[str, Callable[[], Headless]] = {
    "claude-code": claude_code,
    "codex": codex,
    "gemini": gemini,
    "opencode": opencode,
}


def given_command(words: list[str]) -> Headless:
    """A command given after `--`: its output read as Claude Code's, else by its last
    line."""
    return Headless(words, answer=run_logs.claude_answer)


def _toml(groups: list[dict]) -> str:
    """Hook groups as a TOML inline array (JSON's strings are TOML's basic strings)."""

    def value(item: object) -> str:
        if isinstance(item, dict):
            return "{" + ", ".join(f"{k} = {value(v)}" for k, v in item.items()) + "}"
        if isinstance(item, list):
            return "[" + ", ".join(value(v) for v in item) + "]"
        return json.dumps(item)

    return value(groups)


def filled(command: list[str], prompt: str, resume: list[str]) -> list[str]:
    """The command's words with the prompt and the resume's words in place."""
    return [
        word
        for given in command
        for word in ([prompt] if given == PROMPT else resume if given == RESUME else [given])
    ]
