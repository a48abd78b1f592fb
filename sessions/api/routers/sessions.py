"""/api/sessions: start, list, read and append to sessions, and their logs."""

from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from ninja import Query, Router

from sessions import store
from sessions.api import answers, requests
from sessions.api.common import (
    KEY_HEADER,
    LOG_ANSWER,
    ONE_ERRORS,
    READ_ERRORS,
    WRITE_ERRORS,
    appended,
    event_appended,
    limits_of,
    log_download,
    next_page,
    view_of,
    view_of_appended,
)
from sessions.domain import vocabulary
from sessions.readmodels import board as board_model
from sessions.readmodels import session_views, shapes
from sessions.rules.refusals import UnknownSession

router = Router(tags=["sessions"])


@router.post(
    "/sessions",
    response={201: answers.Session, 200: answers.Session, **WRITE_ERRORS},
    summary="Start a session",
)
def start_session(
    request: HttpRequest,
    body: requests.StartSession,
    idempotency_key: requests.IdempotencyKey | None = KEY_HEADER,
):
    fields = body.model_dump(exclude={"id"})
    result, status = appended(request, body.id, vocabulary.START, fields, idempotency_key)
    return JsonResponse(view_of_appended(result), status=status)


@router.get(
    "/sessions",
    response={200: answers.SessionList, **READ_ERRORS},
    summary="List sessions, newest activity first",
)
def list_sessions(request: HttpRequest, filters: Query[requests.SessionFilters]):
    now = timezone.now()
    limits = limits_of(filters)
    query = store.SessionQuery(
        owner=filters.owner or None,
        text=filters.q or None,
        status=filters.status,
        stale=filters.stale,
        attention=filters.attention,
        at=filters.at,
        offset=(filters.page - 1) * filters.page_size,
        limit=filters.page_size + 1,  # one more tells whether another page follows
    )
    rows = board_model.listing(query, now, limits)
    ids, has_next = rows[: filters.page_size], len(rows) > filters.page_size
    views = session_views.session_views(ids, now, limits, filters.at)
    next_url = next_page(request, "page", filters.page + 1) if has_next else None
    return JsonResponse({"items": [answers.session_json(views[i]) for i in ids], "next": next_url})


@router.get(
    "/sessions/{session_id}",
    response={200: answers.Session, **ONE_ERRORS},
    summary="A session's view",
)
def session_detail(
    request: HttpRequest, session_id: requests.SessionId, options: Query[requests.ViewOptions]
):
    return JsonResponse(view_of(session_id, options))


@router.post(
    "/sessions/{session_id}/events",
    response={201: answers.Appended, 200: answers.Appended, **WRITE_ERRORS},
    summary="Append an event",
)
def append(
    request: HttpRequest,
    session_id: requests.SessionId,
    body: requests.AppendEvent,
    idempotency_key: requests.IdempotencyKey | None = KEY_HEADER,
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


@router.get(
    "/sessions/{session_id}/events",
    response={200: answers.EventList, **ONE_ERRORS},
    summary="A session's events, oldest first, a page at a time",
)
def events(request: HttpRequest, session_id: requests.SessionId, page: Query[requests.EventPage]):
    if not store.session_exists(session_id):
        raise UnknownSession(session_id)
    records = store.events_page(session_id, page.after, page.limit + 1)
    has_next, records = len(records) > page.limit, records[: page.limit]
    next_url = next_page(request, "after", records[-1].seq) if has_next else None
    return JsonResponse({"items": [shapes.event_json(e) for e in records], "next": next_url})


@router.get(
    "/sessions/{session_id}/events.jsonl",
    response={200: None, **ONE_ERRORS},
    summary="The session's log as JSONL: one event per line, oldest first",
    openapi_extra={"responses": {200: LOG_ANSWER}},
)
def session_log(request: HttpRequest, session_id: requests.SessionId):
    return log_download(session_id, session_views.session_events(session_id), UnknownSession)
