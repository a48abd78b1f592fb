"""Which agent program `ct` acts for, and its version (docs/rules.md, "Vocabulary": an
event's `agent`, e.g. `claude-code 2.1.332`).

`CT_AGENT` says it outright (the dispatcher sets it for the agents it launches, so that
their hooks and their own `ct block` agree). Otherwise the hooks find the program's
version from its npm package: the nearest `package.json` of that name above a script the
processes they run under were started with (Linux's /proc), else above the program on
PATH; failing both, the program's name alone. A few small reads, once per agent session.
"""

import json
import os
import re
import shutil
from pathlib import Path

from ct import environment
from ct.text import clean

AGENT_MAX = 100
# Each program's npm package and the command that runs it.
PACKAGES = {
    "claude-code": ("@anthropic-ai/claude-code", "claude"),
    "codex": ("@openai/codex", "codex"),
    "gemini": ("@google/gemini-cli", "gemini"),
    "opencode": ("opencode-ai", "opencode"),
}
# What people call each program (the tower's `domain.agents.PROGRAM_NAMES`, tested alike).
PROGRAM_NAMES = {
    "claude-code": "Claude Code",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "opencode": "OpenCode",
}
_ANCESTORS, _FOLDERS_UP = 8, 6
# A native build's package names its platform after the program's name, and sometimes after
# the version too (Codex's `@openai/codex-linux-x64` says "0.169.0-linux-x64"; OpenCode's
# `opencode-linux-x64` and `opencode-linux-x64-baseline`): the part before is the
# program's.
_PLATFORM_SUFFIX = re.compile(r"-(linux|darwin|win32|windows)-[a-z0-9]+(-baseline|-musl)*$")


def given() -> str | None:
    """`CT_AGENT`, as the tower takes it, or None when unset."""
    return clean(environment.agent(), AGENT_MAX, "line")


def with_given(body: dict) -> dict:
    """`body`, saying which agent wrote it when `CT_AGENT` says so (an agent's own `ct`
    command, under `ct dispatch`); a person's `ct` says nothing."""
    found = given()
    return {**body, "agent": found} if found else body


def label(program: str) -> str:
    """What events written for `program` say: `CT_AGENT`, else "program version"."""
    found = given()
    if found:
        return found
    version = version_of(program)
    return f"{program} {version}" if version else program


def version_of(program: str) -> str | None:
    """The version of `program`'s package that runs this hook, or None if not found."""
    if program not in PACKAGES:
        return None
    package, command = PACKAGES[program]
    for script in (*_ancestor_scripts(), _on_path(command)):
        if script is not None and (version := _package_version(script, package, command)):
            return version
    return None


def _ancestor_scripts() -> list[Path]:
    """The paths the processes above this one were started with (nearest first)."""
    scripts, pid = [], os.getppid()
    for _ in range(_ANCESTORS):
        if pid <= 1:
            break
        try:
            words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        scripts += [Path(os.fsdecode(w)) for w in words[:3] if w.startswith(b"/")]
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # the parent's (after the name)
    return scripts


def _on_path(command: str) -> Path | None:
    found = shutil.which(command)
    return Path(found) if found else None


def _package_version(script: Path, package: str, command: str) -> str | None:
    """The version in the nearest `package.json` above `script` of `package`, or of a native
    build of it (OpenCode's `opencode-linux-x64`, Codex's `@openai/codex-linux-x64`)."""
    try:
        folder = script.resolve().parent
    except OSError:
        return None
    for candidate in [folder, *folder.parents][:_FOLDERS_UP]:
        try:
            meta = json.loads((candidate / "package.json").read_text())
        except (OSError, ValueError):
            continue
        name = (
            _PLATFORM_SUFFIX.sub("", str(meta.get("name") or "")) if isinstance(meta, dict) else ""
        )
        if name in (package, command):
            version = _PLATFORM_SUFFIX.sub("", str(meta.get("version") or ""))
            return clean(version, 40, "line")
    return None


def program_name(agent: str) -> str:
    """What people call the program of an `agent` value ("codex 0.169.0" → "Codex")."""
    program = agent.split()[0] if agent.split() else agent
    return PROGRAM_NAMES.get(program, program)
