"""The fixtures of `ct dispatch`'s tests: a real git repository with one commit, the
stand-in agent's command, and `ct`'s environment against the live tower."""

import sys

import pytest

from sessions.readmodels import feed as feed_model
from tests.support.ct_tools import CT, ct_env
from tests.support.dispatching import AGENT, IDENTITY
from tests.support.git_repo import checkout, commit


@pytest.fixture
def repo(tmp_path):
    folder = checkout(tmp_path / "shop", branch="main")
    commit(folder)
    return folder


@pytest.fixture
def agent(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    return [sys.executable, str(script)]


@pytest.fixture
def env(tmp_path, live_server, token):
    pids = tmp_path / "pids"
    pids.mkdir()
    home = ct_env(tmp_path / "home", live_server.url, token)
    yield {**home, **IDENTITY, "CT_PIDS": str(pids), "CT_BIN": CT}
    feed_model.end_waits()  # an idle dispatcher's poll ended before the database goes
