"""What the client's tests share: a checkout as git writes one, without a commit, and
one with Control Tower's hooks installed for Claude Code."""

import json
from pathlib import Path

import pytest

from tests.support.ct_tools import ct_env, hook_payload, run_ct, run_hook

SID = "5f1c2d3e-0000-4000-8000-000000000001"  # a Claude Code session's id
SESSION = f"cc-{SID}"  # the tower session its hooks start


@pytest.fixture
def repo(tmp_path):
    """A git checkout on branch fix-login (as git writes it: .git/HEAD)."""
    folder = tmp_path / "repo"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/fix-login\n")
    return folder


@pytest.fixture
def env(tmp_path, live_server, token):
    return ct_env(tmp_path / "home", live_server.url, token)


@pytest.fixture
def hook(env, repo):
    """Runs one hook event of Claude Code session SID in the repo."""

    def run(event, *, session_id=SID, environment=None, **fields):
        payload = hook_payload(event, session_id, repo, **fields)
        done = run_hook(environment or env, payload)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else None

    return run


def with_hooks(folder: Path, tmp_path: Path) -> Path:
    """`folder`, with Control Tower's hooks installed in its settings by `ct`."""
    done = run_ct(
        ct_env(tmp_path, None, None),
        "hooks",
        "claude-code",
        "--install",
        "--settings",
        str(folder / ".claude" / "settings.json"),
    )
    assert done.returncode == 0, done.stderr
    return folder


@pytest.fixture
def project(tmp_path):
    """A checkout on branch fix-login, with Control Tower's hooks installed by `ct`."""
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/fix-login\n")
    return with_hooks(folder, tmp_path)
