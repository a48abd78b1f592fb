"""Space on the agent's side (DESIGN.md, "Space"): before a tool writes a file, who else
holds that path in this repository, answered from a copy of the repository's
reservations at most `FRESH_SECONDS` old kept in the state folder, so that a write costs
no request while the copy is fresh.

The glob rules are the tower's (`sessions.domain.paths`), written again here because
`ct` uses the standard library only; the same conformance cases check both
(tests/conformance/v4/paths.json)."""

import contextlib
import json
import re
import time
from functools import lru_cache
from pathlib import Path

from ct import files, gitfacts
from ct.client import Refused, Tower, Unreachable

FRESH_SECONDS = 15
PATHS_MAX, PATH_MAX = 100, 500  # the tower's caps on a heartbeat's paths
# The tools that write a file, and the field of their input naming it.
WRITE_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}


# The glob rules -----------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _segment(segment: str) -> re.Pattern:
    wild = {"*": "[^/]*", "?": "[^/]"}
    return re.compile("".join(wild.get(char) or re.escape(char) for char in segment))


def matches(pattern: str, path: str) -> bool:
    """Whether `pattern` covers `path` (both relative to the repository's root)."""
    wanted, given = pattern.split("/"), path.split("/")
    if "*" not in pattern and "?" not in pattern:
        return given[: len(wanted)] == wanted  # a folder covers what is under it
    # The segments before the first wildcard must be the path's own: most patterns are
    # ruled out here, before a regular expression is made (a hook is a new process).
    for index, segment in enumerate(wanted):
        if "*" in segment or "?" in segment:
            break
        if index >= len(given) or given[index] != segment:
            return False
    reached = {0}
    for segment in wanted:
        if segment == "**":
            reached = set(range(min(reached), len(given) + 1)) if reached else set()
        else:
            regex = _segment(segment)
            reached = {i + 1 for i in reached if i < len(given) and regex.fullmatch(given[i])}
        if not reached:
            return False
    return len(given) in reached


# Where a write lands ------------------------------------------------------------------


def written_path(payload: dict, checkout: gitfacts.Checkout | None) -> tuple[str, str] | None:
    """(repo, path relative to the repository's root) of the file a write tool names in
    the `checkout` it ran in, symlinks resolved; None for another tool, no checkout or one
    with no `owner/name` origin, or a path outside the repository."""
    field = WRITE_TOOLS.get(str(payload.get("tool_name") or ""))
    given = (payload.get("tool_input") or {}).get(field) if field else None
    if not isinstance(given, str) or not given:
        return None
    if checkout is None or checkout.facts.repo is None:
        return None
    cwd = Path(str(payload.get("cwd") or "."))
    try:
        root = checkout.root.resolve()
        target = (cwd / given).resolve()
        relative = target.relative_to(root)
    except (OSError, ValueError, RuntimeError):
        return None  # outside the repository (or a symlink loop): never reserved
    text = relative.as_posix()
    return (checkout.facts.repo, text) if text not in ("", ".") and len(text) <= PATH_MAX else None


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


def holders(items: list[dict], path: str, own_session: str | None) -> list[dict]:
    """The reservations of other sessions whose patterns cover `path`."""
    return [
        item
        for item in items
        if item.get("session") != own_session
        and any(matches(pattern, path) for pattern in item.get("paths", ()))
    ]


def held_sentence(path: str, holders_found: list[dict]) -> str:
    """Who holds `path`, and what their node is."""
    who = "; ".join(
        f"{item['owner']}'s session {item['session']} (node {item['node']} of plan {item['plan']})"
        for item in holders_found
    )
    return f"Control Tower: {path} is reserved by {who}."
