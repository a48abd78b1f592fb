"""A dispatched run's workspace (docs/rules.md, "Running the plan"): its git worktree on the
branch `ct/<plan>/<node>`, the prompt its agent is given, and the log of what it said.
Each worktree lives in the state folder, so a dispatcher's leftovers are found again.

The standard library only, and git through its command line: nothing here runs longer
than git does."""

import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ct import files
from ct.lines import attempt_lines

LOG_KEPT_BYTES = 1024 * 1024  # the end of a run's log kept once it ends
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class WorkspaceError(Exception):
    """A worktree that cannot be made: what git said, for the session's close."""


def git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=120
    )


def repository_root(folder: Path) -> Path | None:
    """The top of the git checkout holding `folder`, or None when it is in none."""
    found = git(folder, "rev-parse", "--show-toplevel") if folder.is_dir() else None
    return Path(found.stdout.strip()) if found is not None and found.returncode == 0 else None


def branch_name(plan: str, node: str) -> str:
    return f"ct/{plan}/{node}"


def _has_branch(repo: Path, ref: str) -> bool:
    return git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode == 0


@dataclass(frozen=True)
class Workspace:
    plan: str
    node: str
    session: str
    folder: Path
    branch: str


def worktrees_home() -> Path:
    return files.state_home() / "worktrees"


def runs_home() -> Path:
    return files.private_folder(files.state_home() / "runs")


def make(
    repo: Path, plan: str, node: str, session: str, base: str, last_branch: str | None
) -> "Workspace":
    """A worktree for the run of `session` on `node`, on `ct/<plan>/<node>`: that branch
    as it is when it exists here already (an earlier attempt's), else made from the last
    attempt's branch when it exists here or on origin, else from `base`."""
    branch = branch_name(plan, node)
    folder = worktrees_home() / _UNSAFE.sub("_", plan) / f"{_UNSAFE.sub('_', node)}-{session}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(repo, branch)
    if _has_branch(repo, f"refs/heads/{branch}"):
        made = _git_past_locks(repo, "worktree", "add", str(folder), branch)
    else:
        start = base
        for candidate in (last_branch, f"origin/{last_branch}" if last_branch else None):
            if candidate and _has_branch(repo, candidate):
                start = candidate
                break
        made = _git_past_locks(repo, "worktree", "add", "-b", branch, str(folder), start)
    if made.returncode != 0:
        raise WorkspaceError(made.stderr.strip().splitlines()[-1] if made.stderr else "git failed")
    return Workspace(plan, node, session, folder, branch)


LOCK_TRIES = 5


def _git_past_locks(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """`git` tried again while another git of the same repository (another slot, another
    dispatcher) holds a lock file it needs: a worktree is not refused for that."""
    done = git(repo, *args)
    for attempt in range(LOCK_TRIES - 1):
        if done.returncode == 0 or ".lock" not in done.stderr:
            break
        time.sleep(0.1 * 2**attempt)
        done = git(repo, *args)
    return done


def _remove_stale(repo: Path, branch: str) -> None:
    """An earlier attempt's worktree of the node's branch, left by a dispatcher that was
    killed: a new claim of the node means that attempt's session is closed (a reclaim
    closes it), so its worktree goes, or the branch could not be checked out again."""
    listed = git(repo, "worktree", "list", "--porcelain").stdout.split("\n\n")
    home = worktrees_home().resolve()
    for entry in listed:
        lines = dict(line.split(" ", 1) for line in entry.splitlines() if " " in line)
        folder = Path(lines.get("worktree", "/"))
        if lines.get("branch") == f"refs/heads/{branch}" and folder.resolve().is_relative_to(home):
            remove(repo, folder)


def remove(repo: Path, folder: Path) -> None:
    """The worktree gone (its branch kept), however it was left."""
    git(repo, "worktree", "remove", "--force", str(folder))
    if folder.exists():
        shutil.rmtree(folder, ignore_errors=True)
    git(repo, "worktree", "prune")


def has_commits_over(repo: Path, branch: str, base: str) -> bool:
    found = git(repo, "rev-list", "--count", f"{base}..{branch}")
    return found.returncode == 0 and found.stdout.strip() not in ("", "0")


def push(workspace: Workspace) -> str | None:
    """Push the run's branch to origin; why it could not, or None."""
    pushed = git(workspace.folder, "push", "--quiet", "origin", workspace.branch)
    return None if pushed.returncode == 0 else (pushed.stderr.strip() or "git push failed")


def answered(prompt_text: str, answer: str) -> str:
    """The prompt of an agent started again after a person answered it (one that cannot
    resume its own conversation): what it was given, and the answer."""
    return f"{prompt_text}\nYou asked a person, and they answered: {answer}\n"


def prompt(claimed: dict, plan_title: str | None, done_when: str) -> str:
    """What the agent is told: the node, its brief, the plan, the last attempt's handoff,
    and when its work counts as done."""
    lines = [f"Your task: {claimed.get('title') or claimed['node']} (node {claimed['node']}"]
    lines[0] += f" of the plan {plan_title or claimed['plan']})."
    if claimed.get("brief"):
        lines += ["", claimed["brief"]]
    if claimed.get("last_attempt"):
        lines += ["", "Someone worked on this before you:", *attempt_lines(claimed["last_attempt"])]
    lines.append("")
    if done_when == "merge":
        lines.append(
            "It is done when your work is committed on this branch and a pull request is open."
        )
    else:
        lines.append("It is done when your work is committed on this branch.")
    return "\n".join(lines) + "\n"


def keep_tail(log: Path) -> None:
    """Cut a finished run's log to its last `LOG_KEPT_BYTES`."""
    try:
        size = log.stat().st_size
        if size > LOG_KEPT_BYTES:
            with log.open("rb") as source:
                source.seek(size - LOG_KEPT_BYTES)
                tail = source.read()
            log.write_bytes(tail)
    except OSError:
        pass
