"""`POST /integrations/github`: GitHub's webhook deliveries as GitHub sends them
(docs/rules.md, "Where the work lands"). It only receives: nothing about a session is ever
read from GitHub.

The answers, in this order: 404 unless `GITHUB_WEBHOOK_SECRET` is set; 413 for a body
over 5 MiB; 401 unless `X-Hub-Signature-256` is the body's HMAC with the secret
(compared in constant time); 400 for a body that is not a JSON object or lacks the
fields its event needs; then 200 `{"pong": true}` for a ping, 202 `{"matched": 0}` for
an event or action that reports nothing, else 200 `{"matched", "appended"}`.

The endpoint is described by an OpenAPI document of its own, at
`/integrations/openapi.json` (django-ninja builds it from the operation below), which
schemathesis runs against as it does the agent API's.
"""

import json

from django.http import HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI, Schema
from ninja.security import APIKeyHeader

from sessions import config
from sessions.domain import github
from sessions.http import error_response, retrying_else
from sessions.rules import forge

# The headers GitHub sends with every delivery, as `receive` reads them (an event's name
# or a delivery's id longer than this is not GitHub's).
HEADER_MAX = 200
_EVENTS = ("ping", "pull_request", "check_suite", "check_run", "status")
_HEADERS = {
    "X-GitHub-Event": f"The event: {', '.join(_EVENTS)} report; any other answers 202.",
    "X-GitHub-Delivery": "The delivery's id: its idempotency key.",
}
# Documented by hand: declared as parameters, django-ninja would refuse a delivery that
# lacks one with its own 422 before the signature is checked (401 comes before 400).
_REQUEST = {
    "parameters": [
        {
            "in": "header",
            "name": name,
            "required": True,
            "description": description,
            "schema": {"type": "string", "minLength": 1, "maxLength": HEADER_MAX},
        }
        for name, description in _HEADERS.items()
    ],
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {"type": "object", "description": "The event's payload, whole."}
            }
        },
    },
}


class SignedByGitHub(APIKeyHeader):
    """`X-Hub-Signature-256`: `sha256=` and the body's HMAC-SHA256 with the webhook's
    secret, in hex. Declared so that the document names it; `receive` checks it, after
    the body's size (413 comes before 401)."""

    param_name = "X-Hub-Signature-256"

    def __call__(self, request: HttpRequest) -> bool:
        return True

    def authenticate(self, request: HttpRequest, key: str | None) -> bool:
        return True


class Pong(Schema):
    pong: bool


class Reported(Schema):
    matched: int  # the sessions the delivery named
    appended: int  # the events it appended (none on a redelivery)


class Unmatched(Schema):
    matched: int  # 0: the event or action reports nothing


class Refusal(Schema):
    error: str
    detail: str


integrations = NinjaAPI(
    title="Control Tower forge integration",
    version="1",
    description="GitHub's webhook deliveries, as GitHub sends them, signed with the "
    "webhook's secret (`GITHUB_WEBHOOK_SECRET`).",
    auth=SignedByGitHub(),
    urls_namespace="integrations",
    docs_url=None,
    openapi_url="/openapi.json",
)

_unavailable = retrying_else(
    lambda request, fault: error_response(503, "unavailable", fault.detail)
)


@integrations.post(
    "/github",
    response={
        200: Pong | Reported,
        202: Unmatched,
        frozenset({400, 401, 404, 413, 503}): Refusal,
    },
    openapi_extra=_REQUEST,
    summary="Receive a GitHub webhook delivery",
)
def delivery(request: HttpRequest) -> HttpResponse:
    """A delivery's reports land on the sessions working its repo and branch, or at its
    commit; a merge closes them. 404 without a secret set, 413 past 5 MiB, 401 for a
    signature that is not the body's, 400 for a body that is not a JSON object or
    lacks its event's fields."""
    secret = config.current().github_webhook_secret
    if not secret:
        return error_response(404, "not_found", f"There is nothing at {request.path}.")
    # Read once, before anything that may run again on a new connection: a run after a
    # lost connection would find the stream spent, and refuse GitHub's signature.
    body = _body(request)
    if body is None:
        return error_response(413, "too_large", "A delivery may be at most 5 MiB.")
    if not github.signature_matches(secret, body, request.headers.get("X-Hub-Signature-256")):
        return error_response(
            401, "bad_signature", "X-Hub-Signature-256 is missing or is not this body's signature."
        )
    return receive(request, body)


@_unavailable
def receive(request: HttpRequest, body: bytes) -> HttpResponse:
    event = request.headers.get("X-GitHub-Event", "")
    key = request.headers.get("X-GitHub-Delivery", "").strip()
    try:
        payload = json.loads(body)
    except ValueError:
        payload = None
    except RecursionError:
        return error_response(400, "invalid", "The delivery's body is nested too deeply.")
    if not isinstance(payload, dict):
        return error_response(400, "invalid", "The delivery's body is not a JSON object.")
    if not event or len(event) > HEADER_MAX:
        return error_response(400, "invalid", "The delivery names no event (X-GitHub-Event).")
    if not key or len(key) > HEADER_MAX:
        return error_response(400, "invalid", "The delivery has no X-GitHub-Delivery id.")
    if event == "ping":
        return JsonResponse({"pong": True})
    try:
        found = github.delivery(event, payload)
    except github.MissingField as missing:
        return error_response(400, "invalid", f"{str(missing).capitalize()}.")
    if found is None:
        return JsonResponse({"matched": 0}, status=202)
    matched, appended = forge.report(found, key)
    return JsonResponse({"matched": matched, "appended": appended})


def _body(request: HttpRequest) -> bytes | None:
    """The raw body, or None past 5 MiB (read from the stream: Django's own limit on a
    request's body is the API's 64 KiB). A chunked body has no length, and Django reads
    such a request's body as empty: it is read from the server's own stream (gunicorn
    takes the chunks apart), so that one past 5 MiB is 413 too, not a wrong signature."""
    declared = request.META.get("CONTENT_LENGTH") or ""
    if declared.isdigit() and int(declared) > github.MAX_BODY_BYTES:
        return None
    chunked = "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()
    stream = request.META["wsgi.input"] if chunked and not declared else request
    body = stream.read(github.MAX_BODY_BYTES + 1)
    return None if len(body) > github.MAX_BODY_BYTES else body
