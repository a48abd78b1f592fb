"""What the client's tests share: a checkout as git writes one, without a commit."""

import pytest


@pytest.fixture
def repo(tmp_path):
    """A git checkout on branch fix-login (as git writes it: .git/HEAD)."""
    folder = tmp_path / "repo"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/fix-login\n")
    return folder
