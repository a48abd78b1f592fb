"""schemathesis (every check) against a live gunicorn serving the test database: the
API, and the forge integration (its deliveries signed as GitHub signs them,
`forge_signing`), answer every request their own OpenAPI documents allow, refuse every
one they do not, never with a 5xx, and only with documented statuses and shapes.

Bounded (examples per operation) and seeded, so a run is repeatable; `schemathesis.toml`
says which statuses count as acceptance of a schema-valid request.
"""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from sessions.domain.vocabulary import START
from sessions.rules.append import append_event
from tests.conftest import Gunicorn

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


def schemathesis_run(document, seed, *options, env=None):
    """`st run` (every check, 25 examples an operation, seeded) against `document`."""
    run = subprocess.run(
        [
            Path(sys.executable).parent / "st",
            "run",
            document,
            "--checks",
            "all",
            "--max-examples",
            "25",
            "--seed",
            str(seed),
            *options,
            "--no-color",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    return run


@pytest.fixture
def gunicorn_waiting_briefly(database_url, transactional_db):
    """gunicorn whose feed waits a second at most: a generated `wait` is honoured, and
    25 examples of it cost seconds, not minutes."""
    server = Gunicorn(database_url)
    server.env["FEED_WAIT_SECONDS"] = "1"
    yield server.start()
    server.stop()


@pytest.mark.parametrize("seed", [1, 2])
def test_schemathesis_finds_nothing(gunicorn_waiting_briefly, alice, token_for, seed):
    gunicorn = gunicorn_waiting_briefly
    append_event("s1", START, {"title": "A session to act on"}, user=alice)
    token = token_for(alice)
    document = f"{gunicorn.url}/api/openapi.json"
    run = schemathesis_run(document, seed, "--header", f"Authorization: Bearer {token}")
    # A warning may remain: most generated plans name keys, plans or nodes that are not
    # there, so most are refused by design (schemathesis.toml); no check may fail.
    summary = run.stdout.rsplit("SUMMARY", 1)[-1]
    assert "❌" not in summary and "passed" in summary


@pytest.fixture
def forge_secret():
    return secrets.token_hex(16)


@pytest.fixture
def gunicorn_with_a_forge(database_url, transactional_db, forge_secret):
    """gunicorn with the forge integration on: a webhook secret set."""
    server = Gunicorn(database_url)
    server.env["GITHUB_WEBHOOK_SECRET"] = forge_secret
    yield server.start()
    server.stop()


@pytest.mark.parametrize("seed", [1, 2])
def test_schemathesis_finds_nothing_in_the_forge_integration(
    gunicorn_with_a_forge, forge_secret, seed
):
    hooks = {"SCHEMATHESIS_HOOKS": "tests.api.forge_signing", "FORGE_SECRET": forge_secret}
    env = {**os.environ, **hooks, "PYTHONPATH": str(ROOT)}
    run = schemathesis_run(f"{gunicorn_with_a_forge.url}/integrations/openapi.json", seed, env=env)
    summary = run.stdout.rsplit("SUMMARY", 1)[-1]
    assert "❌" not in summary and "passed" in summary
