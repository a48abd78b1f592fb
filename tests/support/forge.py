"""GitHub as the tests' forge: its own published webhook payloads
(`@octokit/webhooks-examples`) and its own signer (`@octokit/webhooks-methods`, run in
node), both pinned in tests/agents; a delivery posted over real HTTP as GitHub posts it."""

import json
import os
import subprocess
import uuid
from functools import cache
from pathlib import Path

import pytest

from tests.support.http import http_request

AGENTS = Path(__file__).resolve().parents[1] / "agents"
EXAMPLES = AGENTS / "node_modules" / "@octokit" / "webhooks-examples" / "api.github.com"
SIGNER = AGENTS / "node_modules" / "@octokit" / "webhooks-methods"
SECRET = "It's a Secret to Everybody"  # GitHub's own documentation's example secret


def required() -> None:
    if EXAMPLES.exists() and SIGNER.exists():
        return
    message = "GitHub's webhook examples or signer are missing in tests/agents (make agents)"
    if os.environ.get("CI") == "true":
        pytest.fail(message + "; required under CI=true.")
    pytest.skip(message + "; skipped.")


@cache
def _examples() -> dict:
    found = json.loads((EXAMPLES / "index.json").read_text())
    return {entry["name"]: entry["examples"] for entry in found}


def example(event: str, action: str | None = None, index: int = 0) -> dict:
    """A copy of GitHub's example payload of `event` (with `action`), as published."""
    required()
    matching = [e for e in _examples()[event] if action is None or e.get("action") == action]
    return json.loads(json.dumps(matching[index]))


def sign(secret: str, body: bytes) -> str:
    """`X-Hub-Signature-256` as GitHub's own library makes it."""
    required()
    script = (
        "import { sign } from '@octokit/webhooks-methods';"
        "let body = ''; process.stdin.on('data', d => body += d);"
        "process.stdin.on('end', async () =>"
        " process.stdout.write(await sign(process.argv[1], body)));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, secret],
        input=body,
        cwd=AGENTS,
        capture_output=True,
        check=True,
        timeout=30,
    )
    return done.stdout.decode()


def deliver(
    url: str, event: str, payload: dict | bytes, *, secret=SECRET, delivery=None, signature=None
):
    """POST a delivery to the tower as GitHub does: its event, id and signature headers."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-GitHub-Hook-ID": "1",
        "User-Agent": "GitHub-Hookshot/tests",
        "Content-Type": "application/json",
    }
    if signature is not None or secret is not None:
        headers["X-Hub-Signature-256"] = signature or sign(secret, body)
    return http_request(url, "POST", "/integrations/github", body, headers=headers)
