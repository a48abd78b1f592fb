"""What every surface's requests share: the one error shape, a request run again after a
lost database connection with its own idempotency key, and the checks that run before
any view.

Every append carries an idempotency key (the client's, or one the surface made for the
request, `server_key`), so a later run of a request returns the event an earlier run may
have committed instead of appending it twice: the caller gets a success, or nothing was
written.
"""

import functools
import uuid
from collections.abc import Callable

from django.contrib.messages.middleware import MessageMiddleware
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse

from sessions import config
from sessions.store.connections import DatabaseUnavailable, again_on_lost_connection

API_PREFIX = "/api/"
# The agents' surfaces: the API, MCP and the forge integration. They answer JSON, never a
# page, so the middleware that serves pages alone is skipped for them (`PageMessageMiddleware`).
AGENT_PREFIXES = (API_PREFIX, "/mcp", "/integrations/")


def error_body(code: str, detail: str, **extra: object) -> dict:
    """The one error shape of the API and of MCP's refusals: `{"error": code, "detail":
    sentence}`, and what a refusal adds (`fields`, the `session` or `plan` as it is)."""
    return {"error": code, "detail": detail, **extra}


def error_response(status: int, code: str, detail: str, **extra: object) -> JsonResponse:
    """An error answered as JSON (`error_body`)."""
    return JsonResponse(error_body(code, detail, **extra), status=status)


def error(request: HttpRequest, status: int, code: str, detail: str) -> HttpResponse:
    """The JSON error of the API under /api/, a plain sentence elsewhere."""
    if request.path.startswith(API_PREFIX):
        return error_response(status, code, detail)
    return HttpResponse(detail, status=status, content_type="text/plain; charset=utf-8")


def not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """The API's 404, for any address under it that names nothing."""
    return error_response(404, "not_found", f"There is nothing at {request.path}.")


def retrying(view: Callable) -> Callable:
    """`view`, run again on a new connection when it loses its own
    (`store.connections.again_on_lost_connection`)."""

    @functools.wraps(view)
    def run(*args: object, **kwargs: object) -> object:
        return again_on_lost_connection(lambda: view(*args, **kwargs))

    return run


def server_key(request: HttpRequest, prefix: str) -> str:
    """An idempotency key made for this request, the same on every run of it, so that
    running it again after a lost connection returns the event it appended instead of
    appending twice."""
    if not hasattr(request, "_tower_key"):
        request._tower_key = f"{prefix}-{uuid.uuid4().hex}"
    return request._tower_key


def retrying_else(
    unavailable: Callable[[HttpRequest, DatabaseUnavailable], HttpResponse],
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """A decorator: the view run again on a new connection when it loses its own
    (`retrying`), and `unavailable(request, fault)` when the database stays away or
    stopped a statement that ran too long. Every surface's views go through it, each
    with its own way of saying so."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        retried = retrying(view)

        @functools.wraps(view)
        def run(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
            try:
                return retried(request, *args, **kwargs)
            except DatabaseUnavailable as fault:
                return unavailable(request, fault)

        return run

    return decorate


def method_not_allowed(request: HttpRequest, allowed: str) -> HttpResponse:
    refusal = error(request, 405, "method_not_allowed", f"Use {allowed} here.")
    refusal["Allow"] = allowed
    return refusal


class PagePolicy:
    """Sends the Content-Security-Policy and Permissions-Policy of the settings with
    every answer (Django 5.2 has no setting for either)."""

    def __init__(self, get_response: Callable) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        settings = config.current()
        response.headers.setdefault("Content-Security-Policy", settings.content_security_policy)
        response.headers.setdefault("Permissions-Policy", settings.permissions_policy)
        return response


class RequestChecks:
    """Refuses a NUL character in the path or the query (no database can store or
    compare one; PostgreSQL raises), and gives the API's 405s its JSON error shape —
    also on the schema and reference pages, which would otherwise answer a write with
    the CSRF failure page."""

    def __init__(self, get_response: Callable) -> None:
        self.get_response = get_response
        self.read_only: set[str] = set()

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = request.META.get("QUERY_STRING")  # most have none: no QueryDict to make
        if "\x00" in request.path or (
            query
            and any(
                "\x00" in key or "\x00" in value
                for key, values in request.GET.lists()
                for value in values
            )
        ):
            return error(request, 400, "invalid", "The address may not contain NUL characters.")
        if not self.read_only:
            self.read_only = {reverse("api:openapi-json"), reverse("api:openapi-view")}
        if request.path in self.read_only and request.method not in ("GET", "HEAD"):
            return method_not_allowed(request, "GET, HEAD")
        response = self.get_response(request)
        if (
            response.status_code == 405
            and request.path.startswith(API_PREFIX)
            and response.get("Content-Type", "").split(";")[0] != "application/json"
        ):
            return method_not_allowed(request, response.get("Allow", ""))
        return response


class PageMessageMiddleware(MessageMiddleware):
    """Django's messages middleware, for the pages only: a page's one-time messages
    ("Session started") are never shown or set by an agent's request (`AGENT_PREFIXES`),
    which skips it for one call instead of its work (bench/RESULTS.md §25). A subclass,
    so that Django's checks still find it in `MIDDLEWARE`."""

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith(AGENT_PREFIXES):
            return self.get_response(request)
        return super().__call__(request)
