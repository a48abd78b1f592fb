"""The agent API under /api/, on django-ninja: the shapes are `schemas`, the rules are
`append`; this module maps each domain refusal to its status and JSON error
`{"error", "detail", "fields"?, "session"?}`.

Requests are validated by the schemas; answers are built by `schemas.session_json` and
`shapes.event_json` and sent as they are (the schemas document them, and schemathesis
checks every answer against that document).
"""

import json
from datetime import datetime

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from ninja import Header, NinjaAPI, Query, Router, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.parser import Parser
from ninja.security import HttpBearer

from sessions import store
from sessions.api import schemas
from sessions.domain import jsonl, projections, vocabulary
from sessions.http import error_response, not_found, retrying_else, server_key
from sessions.readmodels import board as board_model
from sessions.readmodels import feed as feed_model
from sessions.readmodels import flow as flow_model
from sessions.readmodels import plan_views, session_views, shapes
from sessions.rules import window as metrics_window
from sessions.rules.append import append_event, start_unnamed
from sessions.rules.claims import claim_next
from sessions.rules.refusals import (
    Conflict,
    Forbidden,
    InvalidEvent,
    Refused,
    UnknownPlan,
    UnknownSession,
    status_of,
)
from sessions.rules.tokens import READ_ONLY_REFUSAL, Bearer, TokenRefused, bearer_of_header
from sessions.store import connections

# How each domain refusal is said over HTTP.
STATUS_OF = {InvalidEvent: 400, Forbidden: 403, UnknownSession: 404, Conflict: 409}


class ApiError(Exception):
    """A refusal of the HTTP surface itself (authentication, body format)."""

    def __init__(self, status: int, code: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.code, self.detail = status, code, detail


class JsonBody(Parser):
    """Bodies are JSON objects sent as application/json; anything else is refused."""

    def parse_body(self, request: HttpRequest) -> dict:
        if request.content_type != "application/json":
            raise ApiError(
                415,
                "unsupported_media_type",
                "Send the body as JSON with Content-Type application/json.",
            )
        try:
            body = json.loads(request.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise ApiError(400, "invalid", "The body is not valid UTF-8 JSON.") from None
        if not isinstance(body, dict):
            raise ApiError(400, "invalid", "The body must be a JSON object.")
        return body


READING = ("GET", "HEAD", "OPTIONS")


def bearer_of(header: str) -> Bearer:
    """`tokens.bearer_of_header`, its refusal a 401."""
    try:
        return bearer_of_header(header)
    except TokenRefused as refused:
        raise ApiError(401, refused.code, refused.detail) from None


class BearerToken(HttpBearer):
    """A bearer token acts as its user, within its scope (a read token only reads); a
    signed-in browser session may read (GET) only."""

    def __call__(self, request: HttpRequest):
        # A tool call's request, made in process by /mcp, carries the bearer its token
        # is for (set there, never from anything a client sends).
        bearer = getattr(request, "token_bearer", None)
        header = request.headers.get("Authorization", "")
        if bearer is None and header:
            bearer = bearer_of(header)
        if bearer is not None:
            if bearer.read_only and request.method not in READING:
                raise ApiError(403, "read_only_token", READ_ONLY_REFUSAL)
            return bearer.user
        if request.method == "GET" and request.user.is_authenticated:
            return request.user
        raise ApiError(401, "unauthorized", "Send a token as 'Authorization: Bearer <token>'.")

    def authenticate(self, request: HttpRequest, token: str):  # pragma: no cover (see __call__)
        return bearer_of(f"Bearer {token}").user


api = NinjaAPI(
    title="Control Tower agent API",
    version="1",
    description="Append-only session streams. Authenticate with `Authorization: Bearer "
    "<token>` (make one on the Tokens page, or with `manage.py create_token`). Errors are "
    '`{"error": code, "detail": sentence}`.',
    auth=BearerToken(),
    parser=JsonBody(),
    urls_namespace="api",
    docs_url="/",
    openapi_url="/openapi.json",
)
sessions = Router(tags=["sessions"])

# The documented answers of each kind of operation: every status it can give.
# (414: the server in front of Django refuses a request line over its limit.)
READ_ERRORS = {400: schemas.Error, 401: schemas.Error, 414: None, 503: schemas.Error}
ONE_ERRORS = {**READ_ERRORS, 404: schemas.Error}
WRITE_ERRORS = {
    **ONE_ERRORS,
    403: schemas.Error,
    409: schemas.Error,
    413: schemas.Error,
    415: schemas.Error,
}


@api.exception_handler(ApiError)
def on_api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
    return error_response(exc.status, exc.code, exc.detail)


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # ninja says a body the parser refused as a bare 400; the parser's reason is the cause.
    if isinstance(exc.__cause__, ApiError):
        return on_api_error(request, exc.__cause__)
    return error_response(exc.status_code, "invalid", str(exc))


@api.exception_handler(Refused)
def on_refused(request: HttpRequest, exc: Refused) -> HttpResponse:
    status = status_of(exc, STATUS_OF)
    if isinstance(exc, InvalidEvent):
        return error_response(status, exc.code, exc.detail, fields=exc.errors)
    if isinstance(exc, Conflict):
        # The stream as it is now, so that the caller can decide what to do next.
        session = session_views.session_view(exc.session_id)
        if session is not None:
            return error_response(
                status, exc.code, exc.detail, session=schemas.session_json(session)
            )
        plan = plan_views.plan_view(exc.session_id)
        if plan is not None:
            return error_response(status, exc.code, exc.detail, plan=schemas.plan_json(plan))
        return error_response(status, exc.code, exc.detail)
    return error_response(status, exc.code, exc.detail)


@api.exception_handler(ValidationError)
def on_invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    fields = {}
    for error in exc.errors:
        names = [part for part in error.get("loc", ()) if isinstance(part, str)]
        name = names[-1] if len(names) > 1 else "body"
        fields.setdefault(name, error.get("msg", "is invalid"))
    detail = "; ".join(f"{name}: {problem}" for name, problem in fields.items())
    return error_response(400, "invalid", f"Invalid input: {detail}.", fields=fields)


@api.exception_handler(AuthenticationError)
def on_unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return error_response(401, "unauthorized", "Send a token as 'Authorization: Bearer <token>'.")


@api.exception_handler(RequestDataTooBig)
def on_too_large(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return error_response(413, "too_large", "The request body is too large.")


def on_lost_connection(request: HttpRequest, exc: Exception) -> HttpResponse:
    raise exc  # to `retried`, around the whole request (ninja's own handler may not raise)


for lost in connections.LOST_CONNECTION:
    api.exception_handler(lost)(on_lost_connection)


# Runs a whole API request (authentication included) once more after a lost database
# connection; 503 when the database stays unreachable.
retried = retrying_else(
    lambda request: error_response(
        503, "unavailable", "The database is unreachable; try again shortly."
    )
)


@api.exception_handler(Http404)
def on_not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return not_found(request)


def request_key(request: HttpRequest, given: str | None) -> tuple[str, bool]:
    """The request's idempotency key, and whether the client sent it.

    A request without one gets a key of its own, so that retrying it on the server after
    a lost database connection (`retried`) cannot append its event twice.
    """
    if given is not None:
        return given, True
    return server_key(request, "auto"), False


def limits_of(options: schemas.Thresholds) -> projections.Thresholds:
    return session_views.thresholds(
        options.stale_after, options.blocked_after, options.review_after
    )


def view_of(session_id: str, options: schemas.ViewOptions | None = None) -> dict:
    limits = limits_of(options) if options else None
    view = session_views.session_view(session_id, limits=limits, at=options and options.at)
    if view is None:
        raise UnknownSession(session_id)
    return schemas.session_json(view)


def view_of_appended(result) -> dict:
    """The JSON view of the session an append (`append.Appended`) wrote to."""
    return schemas.session_json(session_views.appended_view(result))


def created_status(result, key_given: bool) -> int:
    """201 for a new event; 200 when the client's own key repeated an earlier append."""
    return 200 if key_given and not result.created else 201


def appended(
    request: HttpRequest,
    stream_id: str | None,
    event_type: str,
    fields: dict,
    idempotency_key: str | None,
    expected_seq: int | None = None,
) -> tuple[object, int]:
    """Append as the request's user, under its idempotency key (the client's, or one of
    the server's): the `append.Appended` and the status to answer with. A start with no
    `stream_id` gets one made, and a repeated key finds the start it made."""
    key, given = request_key(request, idempotency_key)
    if stream_id is None:
        result = start_unnamed(event_type, fields, user=request.auth, idempotency_key=key)
    else:
        result = append_event(
            stream_id,
            event_type,
            fields,
            user=request.auth,
            expected_seq=expected_seq,
            idempotency_key=key,
        )
    return result, created_status(result, given)


def event_appended(
    request: HttpRequest, stream_id: str, body: Schema, idempotency_key: str | None
) -> tuple[object, int]:
    """`appended` for a body that names its event's type and may carry `expected_seq`
    (an append to a session, an amend of a plan): its other fields are the event's."""
    fields = body.model_dump(exclude={"type", "expected_seq"})
    return appended(request, stream_id, body.type, fields, idempotency_key, body.expected_seq)


def one_page(rows, number: int, size: int) -> tuple[list, bool]:
    """Page `number` of `rows`, and whether another follows."""
    found = list(rows[(number - 1) * size : number * size + 1])
    return found[:size], len(found) > size


KEY_HEADER = Header(None, alias="Idempotency-Key")
LOG_ANSWER = {
    "description": "One JSON object per line",
    "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
}


@sessions.post(
    "/sessions",
    response={201: schemas.Session, 200: schemas.Session, **WRITE_ERRORS},
    summary="Start a session",
)
def start_session(
    request: HttpRequest,
    body: schemas.StartSession,
    idempotency_key: schemas.IdempotencyKey | None = KEY_HEADER,
):
    fields = body.model_dump(exclude={"id"})
    result, status = appended(request, body.id, vocabulary.START, fields, idempotency_key)
    return JsonResponse(view_of_appended(result), status=status)


@sessions.get(
    "/sessions",
    response={200: schemas.SessionList, **READ_ERRORS},
    summary="List sessions, newest activity first",
)
def list_sessions(request: HttpRequest, filters: Query[schemas.SessionFilters]):
    now = timezone.now()
    limits = limits_of(filters)
    rows = board_model.listing(
        owner=filters.owner or None,
        text=filters.q or None,
        status=filters.status,
        stale=filters.stale,
        attention=filters.attention,
        now=now,
        limits=limits,
        at=filters.at,
        offset=(filters.page - 1) * filters.page_size,
        limit=filters.page_size + 1,  # one more tells whether another page follows
    )
    ids, has_next = rows[: filters.page_size], len(rows) > filters.page_size
    views = session_views.session_views(ids, now, limits, filters.at)
    next_url = next_page(request, "page", filters.page + 1) if has_next else None
    return JsonResponse({"items": [schemas.session_json(views[i]) for i in ids], "next": next_url})


@sessions.get(
    "/sessions/{session_id}",
    response={200: schemas.Session, **ONE_ERRORS},
    summary="A session's view",
)
def session_detail(
    request: HttpRequest, session_id: schemas.SessionId, options: Query[schemas.ViewOptions]
):
    return JsonResponse(view_of(session_id, options))


@sessions.post(
    "/sessions/{session_id}/events",
    response={201: schemas.Appended, 200: schemas.Appended, **WRITE_ERRORS},
    summary="Append an event",
)
def append(
    request: HttpRequest,
    session_id: schemas.SessionId,
    body: schemas.AppendEvent,
    idempotency_key: schemas.IdempotencyKey | None = KEY_HEADER,
):
    result, status = event_appended(request, session_id, body, idempotency_key)
    event = result.event
    position = result.position or store.event_position(event.session, event.seq)
    answer = {
        "event": shapes.event_json(event),
        "session": view_of_appended(result),
        "position": position,
    }
    return JsonResponse(answer, status=status)


@sessions.get(
    "/sessions/{session_id}/events",
    response={200: schemas.EventList, **ONE_ERRORS},
    summary="A session's events, oldest first, a page at a time",
)
def events(request: HttpRequest, session_id: schemas.SessionId, page: Query[schemas.EventPage]):
    if not store.session_exists(session_id):
        raise UnknownSession(session_id)
    records = store.events_page(session_id, page.after, page.limit + 1)
    has_next, records = len(records) > page.limit, records[: page.limit]
    next_url = next_page(request, "after", records[-1].seq) if has_next else None
    return JsonResponse({"items": [shapes.event_json(e) for e in records], "next": next_url})


@sessions.get(
    "/sessions/{session_id}/events.jsonl",
    response={200: None, **ONE_ERRORS},
    summary="The session's log as JSONL: one event per line, oldest first",
    openapi_extra={"responses": {200: LOG_ANSWER}},
)
def session_log(request: HttpRequest, session_id: schemas.SessionId):
    return log_download(session_id, session_views.session_events(session_id), UnknownSession)


def log_download(stream_id: str, records: list, missing: type[Refused]) -> HttpResponse:
    if not records:
        raise missing(stream_id)
    response = HttpResponse(jsonl.encode_log(records), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{stream_id}.jsonl"'
    return response


def next_page(request: HttpRequest, name: str, value: object) -> str:
    query = request.GET.copy()
    query[name] = str(value)
    return request.build_absolute_uri(f"{request.path}?{query.urlencode()}")


def plan_of(plan_id: str, at: datetime | None = None) -> dict:
    view = plan_views.plan_view(plan_id, at)
    if view is None:
        raise UnknownPlan(plan_id)
    return schemas.plan_json(view)


plans = Router(tags=["plans"])


@plans.post(
    "/plans",
    response={201: schemas.Plan, 200: schemas.Plan, **WRITE_ERRORS},
    summary="Create a build plan",
    description="A cycle, a repeated key or a need of no node is refused (400), naming it.",
)
def create_plan(
    request: HttpRequest,
    body: schemas.CreatePlan,
    idempotency_key: schemas.IdempotencyKey | None = KEY_HEADER,
):
    fields = body.model_dump(exclude={"id"})
    result, status = appended(request, body.id, vocabulary.PLAN_CREATE, fields, idempotency_key)
    return JsonResponse(plan_of(result.event.session), status=status)


@plans.get(
    "/plans", response={200: schemas.PlanList, **READ_ERRORS}, summary="List plans, newest first"
)
def list_plans(request: HttpRequest, page: Query[schemas.PlanPage]):
    ids, has_next = one_page(plan_views.plan_ids(page.at), page.page, page.page_size)
    items = [schemas.plan_json(view) for view in plan_views.plan_views(ids, page.at)]
    next_url = next_page(request, "page", page.page + 1) if has_next else None
    return JsonResponse({"items": items, "next": next_url})


@plans.get(
    "/plans/{plan_id}",
    response={200: schemas.Plan, **ONE_ERRORS},
    summary="A plan's view: node states, ready work, progress, critical path",
)
def plan_detail(
    request: HttpRequest, plan_id: schemas.SessionId, options: Query[schemas.PlanOptions]
):
    return JsonResponse(plan_of(plan_id, options.at))


@plans.post(
    "/plans/{plan_id}/events",
    response={201: schemas.PlanAppended, 200: schemas.PlanAppended, **WRITE_ERRORS},
    summary="Amend a plan",
    description="Only the plan's owner (or someone allowed to act on any session) may. "
    "A cycle, an unknown key or a retire that strands a node is refused (400); retiring a "
    "node with a live session is a conflict (409).",
)
def amend_plan(
    request: HttpRequest,
    plan_id: schemas.SessionId,
    body: schemas.AmendPlan,
    idempotency_key: schemas.IdempotencyKey | None = KEY_HEADER,
):
    result, status = event_appended(request, plan_id, body, idempotency_key)
    answer = {"event": shapes.event_json(result.event), "plan": plan_of(plan_id)}
    return JsonResponse(answer, status=status)


@plans.post(
    "/plans/{plan_id}/claim",
    response={201: schemas.Claimed, 200: schemas.Claimed, **WRITE_ERRORS},
    summary="Claim the next ready node, or reclaim a lapsed one: start a session on it",
    description="Agents claiming at once each get a different node; a lapsed node's silent "
    "session is closed (outcome lapsed) in the same transaction. The answer carries the "
    "node's `last_attempt`, the previous worker's handoff. 409 `nothing_ready` when no node "
    "is ready or reclaimable.",
)
def claim(
    request: HttpRequest,
    plan_id: schemas.SessionId,
    body: schemas.Claim,
    idempotency_key: schemas.IdempotencyKey | None = KEY_HEADER,
):
    key, given = request_key(request, idempotency_key)
    result = claim_next(plan_id, user=request.auth, idempotency_key=key)
    answer = view_of_appended(result)
    last = result.last_attempt
    if not result.created:  # a repeated key's answer: as the node's history says
        last = plan_views.last_attempt(plan_id, result.event.node, result.event.session)
    answer["last_attempt"] = schemas.attempt_json(last)
    return JsonResponse(answer, status=created_status(result, given))


@plans.get(
    "/plans/{plan_id}/events.jsonl",
    response={200: None, **ONE_ERRORS},
    summary="The plan's log as JSONL: one event per line, oldest first",
    openapi_extra={"responses": {200: LOG_ANSWER}},
)
def plan_log(request: HttpRequest, plan_id: schemas.SessionId):
    return log_download(plan_id, plan_views.plan_events(plan_id), UnknownPlan)


flow = Router(tags=["metrics"])


@flow.get(
    "/metrics",
    response={200: schemas.Metrics, **READ_ERRORS},
    summary="Flow metrics over a window: throughput, cycle, blocked and review times, flow",
)
def metrics_view(request: HttpRequest, window: Query[schemas.MetricsWindow]):
    since, until = metrics_window.window(window.since, window.until, timezone.now())
    return JsonResponse(shapes.metrics_json(flow_model.metrics(since, until)))


following = Router(tags=["feed"])


@following.get(
    "/feed",
    response={200: schemas.FeedPage, **READ_ERRORS},
    summary="Every event in global order after a cursor: keep next_after and ask again",
)
def feed(request: HttpRequest, query: Query[schemas.FeedQuery]):
    found, next_after = feed_model.feed(
        query.after, query.limit, event_type=query.type, stream=query.stream, plan=query.plan
    )
    items = [shapes.feed_item(position, event) for position, event in found]
    return JsonResponse({"items": items, "next_after": next_after})


account = Router(tags=["account"])


@account.get("/me", response={200: schemas.Me, **READ_ERRORS}, summary="Who the token acts as")
def me(request: HttpRequest):
    return JsonResponse({"username": request.auth.get_username()})


api.add_router("/", sessions)
api.add_router("/", plans)
api.add_router("/", flow)
api.add_router("/", following)
api.add_router("/", account)


def urls() -> tuple[list, str, str]:
    """The API's URL patterns, each view run by `retried`."""
    patterns, app_name, namespace = api.urls
    for pattern in patterns:
        pattern.callback = retried(pattern.callback)
    return patterns, app_name, namespace
