"""Each agent's hook configuration (`ct hooks AGENT [--install [--shared]]`): printed, or
merged into that agent's own settings file (docs/rules.md, "Every agent").

| agent | yours alone | the team's (`--shared`) |
| --- | --- | --- |
| Claude Code | `.claude/settings.local.json` (kept out of git) | `.claude/settings.json` |
| Codex | `$CODEX_HOME/hooks.json` (`~/.codex`) | `.codex/hooks.json` |
| Gemini CLI | `~/.gemini/settings.json` | `.gemini/settings.json` |
| OpenCode | `~/.config/opencode/plugins/control-tower.js` | `.opencode/plugins/control-tower.js` |

The first three take the same shape: `{"hooks": {EVENT: [{"matcher": …, "hooks":
[{"type": "command", "command": …}]}]}}`; what differs is the events, and the fields of
an entry. OpenCode's is a plugin of `ct`'s own (`ct.opencode_plugin`): the file is `ct`'s,
written whole."""

import json
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ct import (
    claude_code,
    codex,
    environment,
    files,
    gemini,
    gitfacts,
    opencode,
    opencode_plugin,
)


@dataclass(frozen=True)
class HookPlace:
    """Where an agent keeps its hooks, which events `ct` takes, and what it asks before
    it runs a hook it has not seen (said after an install)."""

    events: tuple[str, ...]
    personal: Callable[[], Path]
    shared: str
    trust: str
    tool_events: tuple[str, ...] = ()  # the events whose entries match a tool (`"*"`)
    entry: dict = field(default_factory=dict)  # more fields of each hook entry
    ignored: bool = False  # the personal file sits in the checkout: keep it out of git
    plugin: bool = False  # the file is a plugin of `ct`'s own, not settings to merge


PLACES = {
    "claude-code": HookPlace(
        claude_code.EVENTS,
        lambda: Path(".claude/settings.local.json"),
        ".claude/settings.json",
        "Claude Code runs them at its next start.",
        tool_events=("PreToolUse", "PostToolUse"),
        entry={"timeout": 5},
        ignored=True,
    ),
    "codex": HookPlace(
        tuple(codex.HANDLERS),
        lambda: environment.codex_home() / "hooks.json",
        ".codex/hooks.json",
        "Codex runs a hook only once you trust it: open `codex`, then `/hooks`, and "
        "trust each (a project's .codex/ also needs the project trusted).",
        tool_events=tuple(codex.HANDLERS),
    ),
    "gemini": HookPlace(
        tuple(gemini.EVENTS),
        lambda: Path.home() / ".gemini" / "settings.json",
        ".gemini/settings.json",
        "Gemini CLI asks you to accept a project's hooks the first time it sees them, "
        "and again whenever they change.",
        tool_events=("BeforeTool", "AfterTool"),
        entry={"name": "control-tower", "timeout": 5000},
    ),
    "opencode": HookPlace(
        tuple(opencode.EVENTS),
        lambda: files.config_home().parent / "opencode" / "plugins" / "control-tower.js",
        ".opencode/plugins/control-tower.js",
        "OpenCode loads the plugin at its next start, as it is: it asks nothing.",
        plugin=True,
    ),
}


def hook_words(agent: str, shared: bool = False) -> list[str]:
    """The command the agent runs: this `ct`, by its full path when it can be found; for
    a team's shared settings (`shared`), `ct` from each machine's PATH."""
    found = shutil.which("ct") or (sys.argv[0] if Path(sys.argv[0]).name == "ct" else None)
    ct = str(Path(found).resolve()) if found and not shared else "ct"
    return [ct, "hook", agent]


def hook_command(agent: str, shared: bool = False) -> str:
    """`hook_words` as a shell runs them."""
    return shlex.join(hook_words(agent, shared))


def rendered(agent: str, shared: bool) -> str:
    """What `ct hooks AGENT` prints: the settings block, or the plugin."""
    if PLACES[agent].plugin:
        return opencode_plugin.source(hook_words(agent, shared))
    return json.dumps(settings_block(agent, hook_command(agent, shared)), indent=2)


def install_for(agent: str, shared: bool, settings: Path | None) -> Path:
    """Install `agent`'s hooks (in `settings`, else its own place); the file written."""
    place = PLACES[agent]
    path = settings or (Path(place.shared) if shared else place.personal())
    if place.plugin:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rendered(agent, shared))
        return path
    return install(settings_block(agent, hook_command(agent, shared)), path)


def settings_block(agent: str, command: str) -> dict:
    place = PLACES[agent]
    entry = {"type": "command", "command": command, **place.entry}
    return {
        "hooks": {
            event: [
                {"matcher": "*", "hooks": [entry]}
                if event in place.tool_events
                else {"hooks": [entry]}
            ]
            for event in place.events
        }
    }


def install(block: dict, settings: Path) -> Path:
    """Merge `block` into the settings file, keeping what is there: a hook already
    holding the same command is not added twice."""
    path = settings
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


def keep_out_of_git(path: Path) -> Path | None:
    """Name `path` in its checkout's `info/exclude` (once), so that a person's own
    settings file is never committed nor shown as untracked: the exclude file, or None
    outside a checkout."""
    found = gitfacts.git_folder(path.resolve().parent)
    if found is None:
        return None
    root, folder = found
    exclude = gitfacts.common_folder(folder) / "info" / "exclude"
    line = "/" + path.resolve().relative_to(root.resolve()).as_posix()
    text = exclude.read_text() if exclude.exists() else ""
    if line not in text.splitlines():
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a") as out:
            out.write(("" if not text or text.endswith("\n") else "\n") + line + "\n")
    return exclude
