"""The board: the sessions in columns by status, the attention strip, the start form,
and the browser notifications that follow it."""

from datetime import timedelta

from django.http import JsonResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone

from sessions import config, http
from sessions.domain import vocabulary
from sessions.readmodels import board as board_model
from sessions.readmodels import notifications as notification_model
from sessions.readmodels import session_views
from sessions.rules.append import new_session_id
from sessions.rules.refusals import (
    InvalidEvent,
)
from sessions.store import visits
from sessions.web.cards import make_card
from sessions.web.forms import (
    StartForm,
)
from sessions.web.moments import as_of_moment
from sessions.web.pages import (
    action,
    live_page,
    page,
    page_version,
    post_event,
)

COLUMNS = (vocabulary.ACTIVE, vocabulary.BLOCKED, vocabulary.IN_REVIEW, vocabulary.CLOSED)


def board_filters(request):
    mine = request.GET.get("mine") == "1"
    return {
        "mine": mine,
        "owner": request.user.get_username() if mine else request.GET.get("owner", "").strip(),
        "q": request.GET.get("q", "").strip(),
    }


def column_page(asked: str | None, count: int, limit: int) -> int:
    """The page of a column to show: the one asked for, within the column's pages."""
    last = max(1, -(-count // limit))
    try:
        return min(max(int(asked or 1), 1), last)
    except ValueError:
        return 1


def page_query(query: QueryDict, status: str, page: int) -> str | None:
    """The board's query with `status`'s column at `page`; None for no such page."""
    if page < 1:
        return None
    moved = query.copy()
    if page == 1:
        moved.pop(f"{status}_page", None)
    else:
        moved[f"{status}_page"] = str(page)
    return moved.urlencode()


def board_context(request, start_form=None, looking=False):
    """`looking`: the viewer loads the page (not a poll or a re-shown form), which
    records their visit for "since you last looked"."""
    filters = board_filters(request)
    settings = config.current()
    at = as_of_moment(request)
    now = at or timezone.now()
    if at is not None:  # the past has nothing new to mark
        marks_since = None
    elif looking:
        marks_since = visits.look(request.user, now)
    else:
        marks_since = visits.marks_since(request.user)
    since = now - timedelta(hours=settings.recently_closed_hours)
    version = page_version()
    rows = board_model.board_rows(filters["owner"] or None, filters["q"] or None, since, at)
    by_status = {status: [] for status in COLUMNS}
    for row in rows:
        by_status[row.status].append(row.session)
    limit = settings.board_column_limit
    # Each column shows one page of its cards, newest first: `<status>_page` (default 1).
    pages = {
        status: column_page(request.GET.get(f"{status}_page"), len(ids), limit)
        for status, ids in by_status.items()
    }
    windows = {status: slice((page - 1) * limit, page * limit) for status, page in pages.items()}
    shown = [i for status, ids in by_status.items() for i in ids[windows[status]]]
    limits = session_views.thresholds()
    overdue = board_model.needing_attention(rows, now, limits, at)
    strip = overdue[: settings.attention_lines]
    views = session_views.session_views(shown, now, limits, at)
    last_events = {row.session: row.last_at for row in rows}
    lines = board_model.attention_lines({i: last_events[i] for i, _ in strip}, at)
    viewer = request.user if at is None else None  # as of a moment: read-only
    query = request.GET.copy()
    query.pop("since", None)
    columns = []
    for status, ids in by_status.items():
        window = windows[status]
        cards = [
            make_card(views[i], viewer, marks_since=marks_since) for i in ids[window] if i in views
        ]
        columns.append(
            {
                "status": status,
                "label": vocabulary.STATUS_LABELS[status],
                "count": len(ids),
                "cards": cards,
                "first": window.start + 1,
                "last": window.start + len(cards),
                "newer_query": page_query(query, status, pages[status] - 1),
                "older_query": page_query(query, status, pages[status] + 1)
                if window.stop < len(ids)
                else None,
            }
        )
    return {
        "attention": [(lines[i], reason) for i, reason in strip if i in lines],
        "attention_more": max(len(overdue) - settings.attention_lines, 0),
        "columns": columns,
        "marks_since": marks_since,
        "changed_count": sum(card.changed for column in columns for card in column["cards"]),
        "filters": filters,
        "query": query.urlencode(),
        "next_url": f"{reverse('board')}?{query.urlencode()}",
        "version": version,
        "start_form": start_form or StartForm(),
        "at": at,
        "now": now,
        "poll_seconds": settings.poll_seconds,
    }


@page("", "board", as_of=True)
def board(request):
    return live_page(
        request,
        lambda: board_context(request, looking=not request.htmx),
        "sessions/board.html",
        "sessions/_columns.html",
    )


@action("sessions/start", "start")
def start(request):
    form = StartForm(request.POST)
    if form.is_valid():
        session_id = request.__dict__.setdefault("_tower_session", new_session_id())
        posted = post_event(request, session_id, vocabulary.START, form.event_fields(), form=form)
        if posted.succeeded:
            return redirect("board")
        if not isinstance(posted.refusal, InvalidEvent):
            form.add_error(None, posted.refusal.detail)
    return render(request, "sessions/board.html", board_context(request, form), status=400)


@page("notifications/", "notifications")
def notifications(request):
    """What the signed-in person's browser should tell them since its cursor (`after`,
    a feed position; none: where to start), as JSON for the board's "Notify me"."""
    after = request.GET.get("after", "")
    if after and not after.isdigit():
        return http.error_response(400, "invalid", "after must be a feed position.")
    found, next_after = notification_model.notices(
        request.user.get_username(), int(after) if after else None, timezone.now()
    )
    items = [
        {**notice._asdict(), "url": reverse("session", args=[notice.session])} for notice in found
    ]
    return JsonResponse({"items": items, "next_after": next_after})
