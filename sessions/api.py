"""The agent API under /api/: JSON in and out, bearer tokens, errors as {"error", "detail"}."""

import functools
import json
import uuid
from datetime import timedelta

from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError, connection
from django.http import HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from . import jsonl, openapi, reading, vocabulary
from .append import (
    AppendError,
    Conflict,
    InvalidEvent,
    UnknownSession,
    append_event,
    new_session_id,
)
from .tokens import user_for_token

PAGE_SIZE = 50
DATABASE_ATTEMPTS = 2
MAX_PAGE_SIZE = 200
START_KEYS = {"id", "title", "note"}
EVENT_KEYS = {"type", "expected_seq", *vocabulary.TEXT_FIELDS}


class ApiError(Exception):
    def __init__(self, status, code, detail, **extra):
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.extra = extra


def error_response(status, code, detail, **extra):
    return JsonResponse({"error": code, "detail": detail, **extra}, status=status)


def timestamp_or_none(moment):
    return jsonl.format_timestamp(moment) if moment else None


def view_json(view):
    return {
        "id": view.id,
        "title": view.title,
        "owner": view.owner,
        "status": view.status,
        "stale": view.stale,
        "blockers": [
            {
                "reason": block.reason,
                "timestamp": jsonl.format_timestamp(block.timestamp),
                "actor": block.actor,
                "seq": block.seq,
            }
            for block in view.blockers
        ],
        "next_action": view.next_action,
        "opened_at": timestamp_or_none(view.opened_at),
        "last_event_at": timestamp_or_none(view.last_event_at),
        "closed_at": timestamp_or_none(view.closed_at),
        "seq": view.seq,
    }


def authenticate(request):
    """The user of the request's bearer token; a browser session counts for reads only."""
    header = request.headers.get("Authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        user = user_for_token(token.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            raise ApiError(401, "unauthorized", "The bearer token is missing, unknown or revoked.")
        return user
    if request.method == "GET" and request.user.is_authenticated:
        return request.user
    raise ApiError(401, "unauthorized", "Send a token as 'Authorization: Bearer <token>'.")


def json_body(request, allowed_keys):
    if request.content_type != "application/json":
        raise ApiError(
            415,
            "unsupported_media_type",
            "Send the body as JSON with Content-Type application/json.",
        )
    try:
        body = json.loads(request.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ApiError(400, "invalid", "The body is not valid UTF-8 JSON.") from None
    if not isinstance(body, dict):
        raise ApiError(400, "invalid", "The body must be a JSON object.")
    unknown = sorted(set(body) - allowed_keys)
    if unknown:
        raise ApiError(
            400,
            "invalid",
            f"Unknown field(s): {', '.join(unknown)}. Allowed: {', '.join(sorted(allowed_keys))}.",
        )
    return body


def threshold_from(request):
    value = request.GET.get("stale_after")
    if value is None:
        return reading.stale_threshold()
    if not value.isdigit() or int(value) > 10**6:
        raise ApiError(400, "invalid", "stale_after must be a whole number of minutes.")
    return timedelta(minutes=int(value))


def events_of(session_id):
    events = reading.session_events(session_id)
    if not events:
        raise UnknownSession(session_id)
    return events


def view_of(session_id, threshold=None):
    view = reading.session_view(session_id, threshold=threshold)
    if view is None:
        raise ApiError(404, "not_found", f"There is no session {session_id!r}.")
    return view


def respond(view, request, *args, **kwargs):
    """Run an API view, turning every refusal into its JSON error."""
    try:
        user = authenticate(request)
        return view(request, user, *args, **kwargs)
    except ApiError as exc:
        return error_response(exc.status, exc.code, exc.detail, **exc.extra)
    except Conflict as exc:
        session = reading.session_view(exc.session_id)
        return error_response(
            409, exc.code, exc.detail, session=view_json(session) if session else None
        )
    except InvalidEvent as exc:
        return error_response(400, exc.code, exc.detail, fields=exc.errors)
    except AppendError as exc:
        return error_response(exc.status_code, exc.code, exc.detail)
    except RequestDataTooBig:
        return error_response(413, "too_large", "The request body is too large.")


def request_key(request):
    """The request's idempotency key, and whether the client sent it.

    A request without one gets a key of its own, so that retrying it on the server after
    a lost database connection cannot append its event twice.
    """
    given = request.headers.get("Idempotency-Key")
    if given is not None:
        return given, True
    if not hasattr(request, "_tower_key"):
        request._tower_key = f"auto-{uuid.uuid4().hex}"
    return request._tower_key, False


def api_view(*methods):
    """Method check, authentication, and every refusal turned into a JSON error."""

    def decorate(view):
        @csrf_exempt
        @functools.wraps(view)
        def wrapped(request, *args, **kwargs):
            if request.method not in methods:
                response = error_response(
                    405, "method_not_allowed", f"Use {' or '.join(methods)} here."
                )
                response["Allow"] = ", ".join(methods)
                return response
            for _ in range(DATABASE_ATTEMPTS):
                try:
                    return respond(view, request, *args, **kwargs)
                except (OperationalError, InterfaceError):
                    # The database connection was lost mid-request (a restart, a dropped
                    # backend). Every append carries an idempotency key (`request_key`),
                    # so running the request again on a new connection cannot append twice.
                    connection.close()
            return error_response(
                503, "unavailable", "The database is unreachable; try again shortly."
            )

        return wrapped

    return decorate


def created_status(result, key_given):
    """201 for a new event; 200 when the client's own key repeated an earlier append."""
    return 200 if key_given and not result.created else 201


@api_view("GET", "POST")
def sessions(request, user):
    if request.method == "POST":
        return start_session(request, user)
    return list_sessions(request)


def start_session(request, user):
    body = json_body(request, START_KEYS)
    session_id = body.get("id")
    if session_id is None:
        session_id = new_session_id()
    fields = {"title": body.get("title"), "note": body.get("note")}
    key, key_given = request_key(request)
    result = append_event(session_id, vocabulary.START, fields, user=user, idempotency_key=key)
    session = view_json(reading.session_view(result.event.session))
    return JsonResponse(session, status=created_status(result, key_given))


def list_sessions(request):
    params = request.GET
    status = params.get("status")
    if status is not None and status not in vocabulary.STATUSES:
        raise ApiError(400, "invalid", f"status must be one of {', '.join(vocabulary.STATUSES)}.")
    stale = params.get("stale")
    if stale not in (None, "true", "false"):
        raise ApiError(400, "invalid", "stale must be true or false.")
    threshold = threshold_from(request)
    now = timezone.now()
    rows = reading.listing(
        owner=params.get("owner"),
        text=params.get("q"),
        status=status,
        stale=None if stale is None else stale == "true",
        stale_before=now - threshold,
    )
    page_size = params.get("page_size", str(PAGE_SIZE))
    page_number = params.get("page", "1")
    if not (page_size.isdigit() and 1 <= int(page_size) <= MAX_PAGE_SIZE):
        raise ApiError(400, "invalid", f"page_size must be from 1 to {MAX_PAGE_SIZE}.")
    if not (page_number.isdigit() and int(page_number) >= 1):
        raise ApiError(400, "invalid", "page must be a whole number of at least 1.")
    # No total count: counting would walk every session's history; one extra row tells
    # whether there is a next page.
    size, number = int(page_size), int(page_number)
    ids = list(rows[(number - 1) * size : number * size + 1])
    has_next, ids = len(ids) > size, ids[:size]
    views = reading.session_views(ids, now, threshold)
    items = [view_json(views[session_id]) for session_id in ids]
    next_url = None
    if has_next:
        query = params.copy()
        query["page"] = str(number + 1)
        next_url = request.build_absolute_uri(f"{request.path}?{query.urlencode()}")
    return JsonResponse({"items": items, "next": next_url})


@api_view("GET")
def session_detail(request, user, session_id):
    return JsonResponse(view_json(view_of(session_id, threshold_from(request))))


@api_view("GET", "POST")
def session_events(request, user, session_id):
    if request.method == "GET":
        events = events_of(session_id)
        return JsonResponse({"items": [jsonl.event_dict(e) for e in events], "next": None})
    body = json_body(request, EVENT_KEYS)
    event_type = body.get("type")
    if not isinstance(event_type, str):
        raise ApiError(
            400, "invalid", "type is required: one of " + ", ".join(vocabulary.EVENT_TYPES)
        )
    fields = {name: body[name] for name in vocabulary.TEXT_FIELDS if name in body}
    key, key_given = request_key(request)
    result = append_event(
        session_id,
        event_type,
        fields,
        user=user,
        expected_seq=body.get("expected_seq"),
        idempotency_key=key,
    )
    session = reading.session_view(session_id)
    return JsonResponse(
        {"event": jsonl.event_dict(result.event), "session": view_json(session)},
        status=created_status(result, key_given),
    )


@api_view("GET")
def session_log(request, user, session_id):
    events = events_of(session_id)
    response = HttpResponse(jsonl.encode_log(events), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{session_id}.jsonl"'
    return response


def not_found(request, exception=None):
    return error_response(404, "not_found", f"There is nothing at {request.path}.")


def openapi_schema(request):
    return JsonResponse(openapi.schema())
