"""Where a checkout's work is, read from its `.git` files — no `git` process, so a hook
that looks at every tool call stays cheap: the repository (`owner/name` from the `origin`
remote, when it names one the GitHub way), the branch checked out and its head commit.
Worktrees (a `.git` file naming the git folder, its `commondir`) and packed refs are read
as git writes them."""

import re
from pathlib import Path
from typing import NamedTuple

_HEX40 = re.compile(r"[0-9a-f]{40}")
# owner/name at the end of a remote's URL: git@github.com:o/n.git, https://github.com/o/n,
# ssh://git@host/o/n.git
_OWNER_NAME = re.compile(r"[:/]([A-Za-z0-9._-]+)/([A-Za-z0-9._-]+?)(?:\.git)?/?$")


class Facts(NamedTuple):
    repo: str | None
    branch: str | None
    commit: str | None

    def report(self) -> dict:
        """As a `session_work`'s fields (those known)."""
        return {name: value for name, value in self._asdict().items() if value is not None}


def git_folder(start: Path) -> tuple[Path, Path] | None:
    """(the checkout's root, its git folder) for the checkout holding `start`, or None."""
    for place in (start, *start.parents):
        dot_git = place / ".git"
        if dot_git.is_dir():
            return place, dot_git
        if dot_git.is_file():
            try:
                found = dot_git.read_text(errors="replace").strip()
            except OSError:
                return None
            if found.startswith("gitdir:"):
                return place, (place / found.removeprefix("gitdir:").strip()).resolve()
            return None
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return None


def common_folder(folder: Path) -> Path:
    """A worktree's shared git folder (refs, config), or the folder itself."""
    common = _read(folder / "commondir")
    return (folder / common).resolve() if common else folder


def _ref_commit(folders: tuple[Path, ...], ref: str) -> str | None:
    for folder in folders:
        loose = _read(folder / ref)
        if loose and _HEX40.fullmatch(loose):
            return loose
    packed = _read(folders[-1] / "packed-refs") or ""
    for line in packed.splitlines():
        commit, _, name = line.partition(" ")
        if name == ref and _HEX40.fullmatch(commit):
            return commit
    return None


def origin_repo(config: str) -> str | None:
    """`owner/name` of the `origin` remote in a git config's text, if it names one."""
    in_origin = False
    for line in config.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            in_origin = stripped.replace(" ", "") in ('[remote"origin"]',)
            continue
        if in_origin and stripped.startswith("url"):
            url = stripped.partition("=")[2].strip()
            found = _OWNER_NAME.search(url)
            return f"{found.group(1)}/{found.group(2)}" if found else None
    return None


class Checkout(NamedTuple):
    root: Path
    facts: Facts


def facts(start: Path) -> Facts | None:
    """The checkout holding `start`: its repo, branch and head commit (None outside git)."""
    found = checkout(start)
    return None if found is None else found.facts


def checkout(start: Path) -> Checkout | None:
    """The checkout holding `start`: its root and `facts`, read once (None outside git)."""
    found = git_folder(start)
    if found is None:
        return None
    root, folder = found
    common = common_folder(folder)
    head = _read(folder / "HEAD") or ""
    branch = commit = None
    if head.startswith("ref: "):
        ref = head.removeprefix("ref: ").strip()
        branch = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None
        commit = _ref_commit((folder, common) if folder != common else (folder,), ref)
    elif _HEX40.fullmatch(head):
        commit = head  # detached
    config = _read(common / "config") or ""
    return Checkout(root, Facts(origin_repo(config), branch, commit))
