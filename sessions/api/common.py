"""What every router of the agent API shares: the django-ninja `api` with its bearer
authentication and JSON body parser, each domain refusal said with its own status as
the JSON error `{"error", "detail", "fields"?, "session"?}`, the documented errors of
each kind of operation, and the way a request appends (under its idempotency key).

Requests are validated by `requests`; answers are built by `answers.session_json` and
`shapes.event_json` and sent as they are (`answers` documents them, and schemathesis
checks every answer against that document).
"""

from datetime import datetime

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from ninja import Header, NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.parser import Parser
from ninja.security import HttpBearer

from sessions.api import answers, requests
from sessions.domain import jsonl, projections, vocabulary
from sessions.http import error_response, not_found, retrying_else, server_key
from sessions.readmodels import plan_views, session_views
from sessions.rules.append import append_event, start_unnamed
from sessions.rules.refusals import (
    Conflict,
    InvalidEvent,
    Refused,
    UnknownPlan,
    UnknownSession,
)
from sessions.rules.tokens import READ_ONLY_REFUSAL, Bearer, TokenRefused, bearer_of_header
from sessions.store import connections

# How each domain refusal is said over HTTP.


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
            text = request.body.decode("utf-8")
        except UnicodeDecodeError:
            raise ApiError(400, "invalid", "The body is not valid UTF-8 JSON.") from None
        try:
            body = jsonl.strict_loads(text)
        except jsonl.RepeatedKey as repeated:
            # A strict parser never lets the last copy of a key win.
            raise ApiError(400, "invalid", f"The body is refused: {repeated}.") from None
        except (ValueError, RecursionError):
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

# The documented answers of each kind of operation: every status it can give.
# (414: the server in front of Django refuses a request line over its limit.)
READ_ERRORS = {400: answers.Error, 401: answers.Error, 414: None, 503: answers.Error}
ONE_ERRORS = {**READ_ERRORS, 404: answers.Error}
WRITE_ERRORS = {
    **ONE_ERRORS,
    403: answers.Error,
    409: answers.Error,
    413: answers.Error,
    415: answers.Error,
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
    status = exc.status
    if isinstance(exc, InvalidEvent):
        return error_response(status, exc.code, exc.detail, fields=exc.errors)
    if isinstance(exc, Conflict):
        # The stream as it is now, so that the caller can decide what to do next.
        session = session_views.session_view(exc.session_id)
        if session is not None:
            return error_response(
                status, exc.code, exc.detail, session=answers.session_json(session)
            )
        plan = plan_views.plan_view(exc.session_id)
        if plan is not None:
            return error_response(status, exc.code, exc.detail, plan=answers.plan_json(plan))
        return error_response(status, exc.code, exc.detail)
    return error_response(status, exc.code, exc.detail)


# pydantic's names for the shape it tried (`float`, `int`) in an error's location.
_SHAPES = {"float", "int", "str", "list", "dict", "bool", "function-after"}
# What a pattern the schema states means, in the vocabulary's words (pydantic would quote
# the regular expression itself).
_PATTERN_MEANS = {
    **dict.fromkeys(
        (vocabulary.text_pattern("line"), vocabulary.text_pattern("text")),
        "must hold a visible character and no control or invisible characters",
    ),
    f"^{vocabulary.SESSION_ID_PATTERN.pattern}$": vocabulary.session_id_error("."),
}


def _problem(error: dict) -> str:
    if error.get("type") == "string_pattern_mismatch":
        meant = _PATTERN_MEANS.get((error.get("ctx") or {}).get("pattern"))
        if meant:
            return meant
    return error.get("msg", "is invalid")


@api.exception_handler(ValidationError)
def on_invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    fields = {}
    for error in exc.errors:
        loc = [part for part in error.get("loc", ()) if part not in _SHAPES]
        names = [part for part in loc if isinstance(part, str)]
        name = names[-1] if len(names) > 1 else "body"
        problem = _problem(error)
        # Within a field that holds JSON (nodes, an amend's per-node maps), that field is
        # named, with where inside it: its key may be anything the client chose.
        held = next((i for i, part in enumerate(loc) if part in vocabulary.JSON_FIELDS), None)
        if held is not None:
            name = loc[held]
            inside = "".join(f"[{part!r}]" for part in loc[held + 1 :])
            problem = f"{inside} {problem}" if inside else problem
        fields.setdefault(name, problem)
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
    lambda request, fault: error_response(
        503,
        "statement_timeout" if isinstance(fault, connections.StatementTimedOut) else "unavailable",
        fault.detail,
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


def limits_of(options: requests.Thresholds) -> projections.Thresholds:
    return session_views.thresholds(
        options.stale_after, options.blocked_after, options.review_after
    )


def view_of(session_id: str, options: requests.ViewOptions | None = None) -> dict:
    limits = limits_of(options) if options else None
    view = session_views.session_view(session_id, limits=limits, at=options and options.at)
    if view is None:
        raise UnknownSession(session_id)
    return answers.session_json(view)


def view_of_appended(result) -> dict:
    """The JSON view of the session an append (`appends.Appended`) wrote to."""
    return answers.session_json(session_views.appended_view(result))


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
    the server's): the `appends.Appended` and the status to answer with. A start with no
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
    fields.update(vocabulary.removals(body.type, body.model_dump(include=body.model_fields_set)))
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
    return answers.plan_json(view)
