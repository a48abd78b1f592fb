"""A session's page: its card and timeline, and the actions posted to it."""

from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme

from sessions import config, store
from sessions.domain import vocabulary
from sessions.readmodels import plan_views, session_views
from sessions.readmodels import reservations as reservation_model
from sessions.rules.refusals import (
    Conflict,
    InvalidEvent,
)
from sessions.web.cards import make_card
from sessions.web.forms import (
    ActionForm,
)
from sessions.web.pages import (
    SESSION,
    acted,
    action,
    live_page,
    page,
    page_version,
    post_form,
)


def timeline_before(request):
    """The `before` seq of the timeline page asked for, or None for the latest page."""
    value = request.GET.get("before", "")
    return int(value) if value.isascii() and value.isdigit() and len(value) < 10 else None


def session_context(request, session_id, failed_form=None, message=None):
    view = session_views.session_view(session_id)
    if view is None:
        raise Http404(f"There is no session {session_id!r}.")
    # The timeline shows one page of events, the latest unless an earlier page is asked
    # for; the others are linked, so that a long stream never makes a long page or a
    # long read.
    end = min(timeline_before(request) or view.seq + 1, view.seq + 1)
    start = max(1, end - vocabulary.TIMELINE_PAGE)
    return {
        "card": make_card(view, request.user, failed_form, message),
        "space": reservation_model.session_space(view.plan, view.node, view.id, view.touched),
        "dispatched": plan_views.dispatches([view.id]).get(view.id) if view.plan else None,
        "events": timeline(store.events_page(session_id, start - 1, end - start + 1), end),
        "earlier": start if start > 1 else None,
        "later": end + vocabulary.TIMELINE_PAGE if end <= view.seq else None,
        "next_url": reverse("session", args=[session_id]),
        "version": page_version(),
        "poll_seconds": config.current().poll_seconds,
    }


def timeline(events, end):
    """The page's events before seq `end`, each with how long it lasted: until the next
    event (read with the page), the last one until now unless it closed the session."""
    rows = []
    for event, following in zip(events, [*events[1:], None], strict=False):
        if event.seq >= end:
            break
        if following is not None:
            lasted = following.timestamp - event.timestamp
        elif event.type != vocabulary.CLOSE:
            lasted = timezone.now() - event.timestamp
        else:
            lasted = None
        rows.append((event, lasted))
    return rows


@page(f"sessions/{SESSION}/", "session")
def session_page(request, session_id):
    return live_page(
        request,
        lambda: session_context(request, session_id),
        "sessions/session.html",
        "sessions/_session_main.html",
    )


def safe_next(request, session_id):
    target = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        return target
    return reverse("session", args=[session_id])


@action(f"sessions/{SESSION}/<action:chosen>", "act")
def act(request, session_id, chosen):
    """Append the chosen action's event; re-show the card or page with what happened."""
    form = ActionForm(chosen, session_id, request.POST)
    status, message, failed = 400, None, form
    if form.is_valid():
        posted = post_form(request, session_id, chosen.event_type, form)
        status, refusal = posted.status, posted.refusal
        if not isinstance(refusal, InvalidEvent):
            failed = None
        if isinstance(refusal, Conflict):
            message = (
                f"Not done: someone else acted first. {refusal.detail} This is the current state."
            )
        elif refusal is not None and status != 400:
            message = refusal.detail
    on_card = request.POST.get("view") == "card"
    if status == 200 and not request.htmx:
        # Back to the card acted on (a browser opens the folded Closed column to show it).
        anchor = f"#card-{session_id}" if on_card else ""
        return redirect(safe_next(request, session_id) + anchor)
    if status == 403 and not request.htmx:
        return HttpResponse(message, status=403, content_type="text/plain; charset=utf-8")
    if request.htmx:
        # The refusal shows on the card where the hand is, and in the page's notice,
        # which outlives the board's next refresh.
        context = {
            **session_context(request, session_id, failed, message),
            "on_card": on_card,
            "notice": message,
        }
    else:
        context = session_context(request, session_id, failed, message)
    part = "sessions/_card.html" if on_card else "sessions/_session_main.html"
    return acted(request, context, part, "sessions/session.html", status)
