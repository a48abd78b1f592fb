"""Space on the agent's side (DESIGN.md, "Space"): before a tool writes a file, who else
holds that path in this repository, answered from a copy of the repository's
reservations at most `FRESH_SECONDS` old kept in the state folder, so that a write costs
no request while the copy is fresh.

The glob rules are `ct.globs`, which the tower imports too."""

import contextlib
import json
import time
from pathlib import Path

from ct import files, gitfacts
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
    """Who holds a path, and what their node is: "reserved by bob's session s-9 (node
    billing of plan rel)"."""
    who = "; ".join(
        f"{item['owner']}'s session {item['session']} (node {item['node']} of plan {item['plan']})"
        for item in holders_found
    )
    return f"reserved by {who}"


def held_sentence(path: str, holders_found: list[dict]) -> str:
    """Who holds `path`, and what their node is, as the agent is told it."""
    return f"Control Tower: {path} is {holders_phrase(holders_found)}."
