"""What every webhook request carries (docs/rules.md, "Following along"): the headers' names and the
signature a receiver checks. One definition, for the worker that sends and the page that
tells people how to verify."""

import hashlib
import hmac

SIGNATURE_HEADER = "X-Tower-Signature-256"
TIMESTAMP_HEADER = "X-Tower-Timestamp"
DELIVERY_HEADER = "X-Tower-Delivery"
EVENT_HEADER = "X-Tower-Event"
PING = "ping"
USER_AGENT = "ControlTower-Webhooks/1"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The `X-Tower-Signature-256` header of `body` sent at `timestamp` (Unix seconds, the
    `X-Tower-Timestamp` header): the HMAC-SHA256 of `"<timestamp>.<body>"` under
    `secret`. Signing the moment too lets a receiver refuse a replayed delivery."""
    signed = str(timestamp).encode() + b"." + body
    return "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
