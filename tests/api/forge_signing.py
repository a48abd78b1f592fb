"""schemathesis hooks (`SCHEMATHESIS_HOOKS`) for the forge integration's document: each
generated delivery carries GitHub's signature header, made with the secret the server
was given (`FORGE_SECRET`) over the bytes schemathesis sends (its transport writes a
JSON body as `requests` does), so that the runs get past the signature to the payloads.
The signing here is the test's own HMAC, not the tower's check (GitHub's own signer
signs in tests/integrations)."""

import hashlib
import hmac
import json
import os

import schemathesis
from schemathesis.core import NOT_SET


@schemathesis.auth()
class GitHubSignature:
    def get(self, case, context):
        return os.environ["FORGE_SECRET"].encode()

    def set(self, case, secret, context):
        if case.body is NOT_SET:
            return  # no body: unsigned, so 401
        if isinstance(case.body, bytes):
            body = case.body
        else:
            body = json.dumps(case.body, allow_nan=False).encode()
        digest = hmac.new(secret, body, hashlib.sha256).hexdigest()
        case.headers = {**(case.headers or {}), "X-Hub-Signature-256": f"sha256={digest}"}
