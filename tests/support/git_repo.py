"""Real git checkouts for the tests: `git init`, commits and remotes, as an agent's
project is (the hooks read what git writes)."""

import subprocess
from pathlib import Path


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *args],
        capture_output=True,
        text=True,
        check=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "HOME": str(folder),
            "PATH": "/usr/bin:/bin",
        },
    )
    return done.stdout.strip()


def commit(folder: Path, name: str = "a.txt") -> str:
    """A commit adding `name`; its full id."""
    (folder / name).write_text(name)
    git(folder, "add", name)
    git(folder, "commit", "-q", "-m", f"add {name}")
    return git(folder, "rev-parse", "HEAD")


def checkout(folder: Path, branch: str = "fix-login", origin: str = "git@github.com:acme/shop.git"):
    """A new repository at `folder` on `branch`, its `origin` remote set."""
    folder.mkdir(parents=True)
    git(folder, "init", "-q", "-b", branch)
    git(folder, "remote", "add", "origin", origin)
    return folder
