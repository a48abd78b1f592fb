"""`POST /integrations/github`: GitHub's webhook deliveries as GitHub sends them
(DESIGN.md, "The forge integration"). It only receives: nothing about a session is ever
read from GitHub.

The answers, in this order: 404 unless `GITHUB_WEBHOOK_SECRET` is set; 413 for a body
over 5 MiB; 401 unless `X-Hub-Signature-256` is the body's HMAC with the secret
(compared in constant time); 400 for a body that is not a JSON object or lacks the
fields its event needs; then 200 `{"pong": true}` for a ping, 202 `{"matched": 0}` for
an event or action that reports nothing, else 200 `{"matched", "appended"}`.
"""

import json

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from sessions.domain import github
from sessions.http import error_response, method_not_allowed, retrying_else
from sessions.rules import forge

_unavailable = retrying_else(
    lambda request, fault: error_response(503, "unavailable", fault.detail)
)


@csrf_exempt
@_unavailable
def receive(request: HttpRequest) -> HttpResponse:
    secret = settings.GITHUB_WEBHOOK_SECRET
    if not secret:
        return error_response(404, "not_found", f"There is nothing at {request.path}.")
    if request.method != "POST":
        return method_not_allowed(request, "POST")
    body = _body(request)
    if body is None:
        return error_response(413, "too_large", "A delivery may be at most 5 MiB.")
    if not github.signature_matches(secret, body, request.headers.get("X-Hub-Signature-256")):
        return error_response(
            401, "bad_signature", "X-Hub-Signature-256 is missing or is not this body's signature."
        )
    event = request.headers.get("X-GitHub-Event", "")
    key = request.headers.get("X-GitHub-Delivery", "").strip()
    try:
        payload = json.loads(body)
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        return error_response(400, "invalid", "The delivery's body is not a JSON object.")
    if event == "ping":
        return JsonResponse({"pong": True})
    if not key or len(key) > 200:
        return error_response(400, "invalid", "The delivery has no X-GitHub-Delivery id.")
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
    request's body is the API's 64 KiB)."""
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if declared.isdigit() and int(declared) > github.MAX_BODY_BYTES:
        return None
    body = request.read(github.MAX_BODY_BYTES + 1)
    return None if len(body) > github.MAX_BODY_BYTES else body
