"""Space on the agent's side (docs/rules.md, "Space"): before a tool writes a file, who else
holds that path in this repository, answered from a copy of the repository's
reservations at most `FRESH_SECONDS` old kept in the state folder, so that a write costs
no request while the copy is fresh.

The glob rules are `ct.globs`, which the tower imports too."""

import contextlib
import json
import time
from pathlib import Path

from ct import agent_names, files, gitfacts
from ct.client import Refused, Tower, Unreachable
from ct.globs import matches

FRESH_SECONDS = 15
PATHS_MAX, PATH_MAX = 100, 500  # the tower's caps on a heartbeat's paths
# The tools that write a file, and the field of their input naming it.
WRITE_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
# The tools that write by a patch in the `apply_patch` format (Codex's, and OpenCode's),
# and the fields of their input that may hold it: Codex 0.169 sends `{"command": PATCH}`.
PATCH_TOOLS = {"apply_patch": ("command", "input", "patchText", "patch")}
# The lines of such a patch naming a file it adds, updates, deletes or moves one to.
_PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


# Where a write lands ------------------------------------------------------------------


def named_files(payload: dict) -> list[str]:
    """The files a write tool's input names, as given (absolute, or relative to `cwd`):
    one for a write or an edit, every file a patch touches for `apply_patch`."""
    tool = str(payload.get("tool_name") or "")
    given = payload.get("tool_input")
    given = given if isinstance(given, dict) else {}
    if tool in WRITE_TOOLS:
        found = given.get(WRITE_TOOLS[tool])
        return [found] if isinstance(found, str) and found else []
    for field in PATCH_TOOLS.get(tool, ()):
        if isinstance(given.get(field), str):
            return patched_files(given[field])
    return []


def patched_files(patch: str) -> list[str]:
    """Every file an `apply_patch` patch adds, updates, deletes or moves one to, once
    each, in order (at most `PATHS_MAX`)."""
    found: list[str] = []
    for line in patch.splitlines():
        header = next((h for h in _PATCH_HEADERS if line.startswith(h)), None)
        name = line[len(header) :].strip() if header else ""
        if name and name not in found:
            found.append(name)
            if len(found) == PATHS_MAX:
                break
    return found


def written_paths(payload: dict, checkout: gitfacts.Checkout | None) -> list[tuple[str, str]]:
    """(repo, path relative to the repository's root) of each file a write tool names in
    the `checkout` it ran in, symlinks resolved; none for another tool, no checkout or one
    with no `owner/name` origin, and none for a path outside the repository."""
    named = named_files(payload)
    if not named or checkout is None or checkout.facts.repo is None:
        return []
    cwd = Path(str(payload.get("cwd") or "."))
    try:
        root = checkout.root.resolve()
    except (OSError, RuntimeError):
        return []
    found = []
    for given in named:
        try:
            text = (cwd / given).resolve().relative_to(root).as_posix()
        except (OSError, ValueError, RuntimeError):
            continue  # outside the repository (or a symlink loop): never reserved
        if text not in ("", ".") and len(text) <= PATH_MAX:
            found.append((checkout.facts.repo, text))
    return found


# The copy of a repository's reservations ------------------------------------------------


def reservations(tower: Tower, repo: str, timeout: float) -> list[dict] | None:
    """The repository's reservations: the kept copy while it is fresh, else asked for
    (and kept); None when the tower does not answer in time (a write goes through)."""
    path = files.state_file("reservations", repo.lower())
    kept = files.read_json(path)
    if kept and time.time() - kept.get("fetched_at", 0) < FRESH_SECONDS:
        return kept.get("items", [])
    try:
        answer = tower.request("GET", "/reservations", query={"repo": repo}, timeout=timeout)
    except (Unreachable, Refused):
        return None
    items = answer.get("items", [])
    with contextlib.suppress(OSError):  # no state folder: asked again next time
        files.write_private(path, json.dumps({"fetched_at": time.time(), "items": items}))
    return items


def holders(
    items: list[dict], path: str, own_session: str | None, deadline: float
) -> list[dict] | None:
    """The reservations of other sessions whose patterns cover `path`; None when the
    hook's deadline (`time.monotonic()`) passes first, so that a write goes through
    unchecked, as when the tower does not answer: each match is bounded, but a
    repository may hold many patterns."""
    found = []
    for item in items:
        if time.monotonic() > deadline:
            return None
        if item.get("session") != own_session and any(
            matches(pattern, path) for pattern in item.get("paths", ())
        ):
            found.append(item)
    return found


def holders_phrase(holders_found: list[dict]) -> str:
    """Who holds a path, and what their node is: "reserved by bob's session s-9 (Codex,
    node billing of plan rel)"."""
    who = "; ".join(
        f"{item['owner']}'s session {item['session']} ({_by_agent(item)}node {item['node']} "
        f"of plan {item['plan']})"
        for item in holders_found
    )
    return f"reserved by {who}"


def _by_agent(item: dict) -> str:
    """Which agent holds it, when one started the session: "Codex, "."""
    agent = item.get("agent")
    return f"{agent_names.program_name(agent)}, " if isinstance(agent, str) and agent else ""


def held_sentence(path: str, holders_found: list[dict]) -> str:
    """Who holds `path`, and what their node is, as the agent is told it."""
    return f"Control Tower: {path} is {holders_phrase(holders_found)}."
