"""What the client's tests share: a checkout as git writes one, without a commit."""

import json

import pytest

from tests.support.ct_tools import ct_env, hook_payload, run_hook

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
