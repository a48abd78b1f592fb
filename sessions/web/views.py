"""The board, the session page and their forms. Requests append; pages are projections."""

import functools
import json
from dataclasses import dataclass, field
from datetime import UTC, timedelta

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import defaults
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django_htmx.http import trigger_client_event

from sessions import config, http, store
from sessions.domain import metrics as flow_metrics
from sessions.domain import moments, plans, projections, vocabulary, webhooks
from sessions.http import server_key
from sessions.readmodels import board as board_model
from sessions.readmodels import flow as flow_model
from sessions.readmodels import notifications as notification_model
from sessions.readmodels import plan_views, session_views, shapes
from sessions.rules import subscriptions, tokens
from sessions.rules import window as metrics_window
from sessions.rules.append import append_event, new_session_id
from sessions.rules.permissions import may_act, may_message, may_release
from sessions.rules.refusals import (
    Conflict,
    Forbidden,
    InvalidEvent,
    Refused,
    UnknownSession,
    status_of,
)
from sessions.store import visits
from sessions.web import charts, drawing
from sessions.web.forms import (
    ACTIONS,
    ActionForm,
    AmendForm,
    MetricsWindowForm,
    PlanForm,
    StartForm,
    SubscriptionForm,
    TokenForm,
)
from sessions.web.unreachable import resilient

# How the refusals that leave no form to re-show are said to a browser.
STATUS_OF = {Forbidden: 403, UnknownSession: 404}

COLUMNS = (vocabulary.ACTIVE, vocabulary.BLOCKED, vocabulary.IN_REVIEW, vocabulary.CLOSED)


@dataclass
class Card:
    """A session as the viewer sees it: its view and the actions open to them.

    Each action comes with the form that just failed for it, if any; the others are
    written as plain HTML (building a Form per card made a large board slow).
    """

    view: projections.SessionView
    actions: list = field(default_factory=list)  # (Action, failed ActionForm or None)
    message: str | None = None
    changed: bool = False  # events since the viewer last looked (`visits`)

    @property
    def status_label(self):
        return vocabulary.STATUS_LABELS.get(self.view.status, "")


def make_card(view, user, failed_form=None, message=None, marks_since=None):
    """`user` None: a read-only card (the board as of a past moment). A session with
    events after `marks_since` is marked as changed."""
    actions = []
    acting = user is not None and may_act(user, view.owner)
    for action in ACTIONS.values():
        if vocabulary.transition_error(action.event_type, view.status):
            continue
        allowed = acting or (
            action.event_type == vocabulary.MESSAGE
            and user is not None
            and view.plan is not None
            and may_message(user, view.owner, view.plan)
        )
        if allowed:
            failed = failed_form if failed_form and failed_form.action == action else None
            actions.append((action, failed))
    changed = marks_since is not None and view.last_event_at > marks_since
    return Card(view, actions, message, changed)


def add_errors(form, refusal):
    """Show an `InvalidEvent`'s reasons next to the form's fields."""
    for name, problem in refusal.errors.items():
        form.add_error(name if name in form.fields else None, f"This {problem}.")


def page_version():
    """Changes when an event is appended, and once a minute so that ages and staleness
    (which move with the clock alone) are re-rendered too."""
    return f"{board_model.version()}.{int(timezone.now().timestamp() // 60)}"


def unchanged_poll(request):
    return request.htmx and request.GET.get("since") == page_version()


def live_page(request, context_of, page, fragment=None):
    """A page its polls keep fresh: an unchanged poll swaps nothing (204, before any
    work); another poll gets `fragment` rendered (default: the whole page, which the
    poll selects from); a load, the page. `context_of()` builds the context."""
    if unchanged_poll(request):
        return HttpResponse(status=204)
    template = fragment if request.htmx and fragment else page
    return render(request, template, context_of())


def board_filters(request):
    mine = request.GET.get("mine") == "1"
    return {
        "mine": mine,
        "owner": request.user.get_username() if mine else request.GET.get("owner", "").strip(),
        "q": request.GET.get("q", "").strip(),
    }


def as_of_moment(request):
    """The moment a page is asked for as of (`?at=`, ISO 8601; without an offset, UTC,
    as a date and time input sends it), or None for now. The API's rule for a moment
    (`moments.moment`); one it refuses is a `BadMoment`."""
    text = request.GET.get("at", "").strip()
    if not text:
        return None
    try:
        return moments.moment(text, naive_is_utc=True)
    except ValueError as exc:
        raise BadMoment(f"The moment {text!r} {exc}.") from None


class BadMoment(ValueError):
    pass


def answers_bad_moments(view):
    """A page asked for as of a moment it cannot read answers 400, saying why."""

    @functools.wraps(view)
    def page(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except BadMoment as exc:
            return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")

    return page


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


@resilient
@login_required
@require_safe
@answers_bad_moments
def board(request):
    return live_page(
        request,
        lambda: board_context(request, looking=not request.htmx),
        "sessions/board.html",
        "sessions/_columns.html",
    )


@resilient
@login_required
@require_POST
def start(request):
    form = StartForm(request.POST)
    if form.is_valid():
        if not hasattr(request, "_tower_session"):
            request._tower_session = new_session_id()
        try:
            append_event(
                request._tower_session,
                vocabulary.START,
                form.event_fields(),
                user=request.user,
                idempotency_key=server_key(request, "form"),
            )
            return redirect("board")
        except InvalidEvent as exc:
            add_errors(form, exc)
    return render(request, "sessions/board.html", board_context(request, form), status=400)


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


@resilient
@login_required
@require_safe
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


@resilient
@login_required
@require_POST
def act(request, session_id, slug):
    """Append the action's event; re-show the card or page with what happened."""
    action = ACTIONS.get(slug)
    if action is None:
        raise Http404(f"There is no action {slug!r}.")
    form = ActionForm(action, session_id, request.POST)
    status, message, failed = 400, None, form
    if form.is_valid():
        try:
            append_event(
                session_id,
                action.event_type,
                form.event_fields(),
                user=request.user,
                expected_seq=form.cleaned_data["expected_seq"],
                idempotency_key=server_key(request, "form"),
            )
            status, failed = 200, None
        except InvalidEvent as exc:
            add_errors(form, exc)
        except Conflict as exc:
            status, failed = 409, None
            message = f"Not done: someone else acted first. {exc.detail} This is the current state."
        except Refused as exc:
            status, failed, message = status_of(exc, STATUS_OF), None, exc.detail
    on_card = request.POST.get("view") == "card"
    if status == 200 and not request.htmx:
        return redirect(safe_next(request, session_id))
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


def acted(request, context, part, page, status):
    """What a form's post answers: for htmx, the fresh `part` and the page's notice
    replaced out of band, so that a message outlives the refresh that follows; else the
    whole `page`. A change (or a lost race) is announced to the page's other parts. The
    notice of a success looks like one, not like the warning of a refusal."""
    context = {**context, "notice_succeeded": status < 400}
    if request.htmx:
        context = {**context, "part": part, "notice_oob": True}
        response = render(request, "sessions/_acted.html", context, status=status)
    else:
        response = render(request, page, context, status=status)
    if status in (200, 409):
        trigger_client_event(response, "sessions-changed")
    return response


# Plans --------------------------------------------------------------------------------


@resilient
@login_required
@require_safe
def plan_list(request):
    return live_page(request, lambda: plan_list_context(request), "sessions/plans.html")


def plan_list_context(request, form=None):
    views = plan_views.plan_views()
    return {
        "plans": [(view, progress_percent(view)) for view in views],
        "form": form or PlanForm(),
        "version": page_version(),
        "poll_seconds": config.current().poll_seconds,
        "states": plans.NODE_STATES,
    }


def progress_percent(view):
    return round(100 * view.done / view.total) if view.total else 0


@resilient
@login_required
@require_POST
def plan_create(request):
    form = PlanForm(request.POST)
    if form.is_valid():
        plan_id = form.cleaned_data["id"] or request.__dict__.setdefault(
            "_tower_plan", new_session_id()
        )
        try:
            append_event(
                plan_id,
                vocabulary.PLAN_CREATE,
                form.event_fields(),
                user=request.user,
                idempotency_key=server_key(request, "form"),
            )
            return redirect("plan", plan_id)
        except InvalidEvent as exc:
            add_errors(form, exc)
        except Conflict as exc:
            form.add_error("id", exc.detail)
    return render(request, "sessions/plans.html", plan_list_context(request, form), status=400)


def plan_context(request, plan_id, amend_form=None, message=None):
    at = as_of_moment(request) if request.method == "GET" else None
    view = plan_views.plan_view(plan_id, at)
    if view is None:
        raise Http404(f"There is no plan {plan_id!r}" + (" yet at that moment." if at else "."))
    running = [node.session for node in view.nodes if node.session]
    sessions = session_views.session_views(running, at=at)
    return {
        "plan": view,
        "at": at,
        "percent": progress_percent(view),
        "drawing": drawing.draw(view),
        "sessions": sessions,
        "ready": [view.node(key) for key in view.ready],
        "retired": [node for node in view.nodes if node.state == plans.RETIRED],
        "may_amend": at is None and may_act(request.user, view.owner),
        "may_release": at is None and may_release(request.user, view.id),
        "reclaimable": set(view.claimable) & set(view.lapsed) if at is None else set(),
        # The handoffs worth reading: of the nodes not done whose last attempt ended.
        "tried": [
            node
            for node in view.nodes
            if node.last_attempt and node.state not in (vocabulary.DONE, plans.RETIRED)
        ],
        "amend_form": amend_form or AmendForm(initial={"expected_seq": view.seq}),
        "notice": message,
        "version": page_version(),
        "poll_seconds": config.current().poll_seconds,
        "states": plans.NODE_STATES,
    }


@resilient
@login_required
@require_safe
@answers_bad_moments
def plan_page(request, plan_id):
    return live_page(
        request,
        lambda: plan_context(request, plan_id),
        "sessions/plan.html",
        "sessions/_plan_main.html",
    )


def plan_answer(request, plan_id, status, amend_form=None, message=None):
    """The plan page after a start or an amend."""
    context = plan_context(request, plan_id, amend_form, message)
    return acted(request, context, "sessions/_plan_main.html", "sessions/plan.html", status)


@resilient
@login_required
@require_POST
def plan_start(request, plan_id, node):
    """A person starts a node: a session of theirs on it, or the page saying why not."""
    session_id = request.__dict__.setdefault("_tower_session", new_session_id())
    try:
        append_event(
            session_id,
            vocabulary.START,
            {"plan": plan_id, "node": node},
            user=request.user,
            idempotency_key=server_key(request, "form"),
        )
    except InvalidEvent as exc:
        return plan_answer(request, plan_id, 400, message=exc.detail)
    except Conflict as exc:
        return plan_answer(request, plan_id, 409, message=f"Not started: {exc.detail}")
    if request.htmx:
        return plan_answer(request, plan_id, 200, message=f"Started {node!r} as {session_id}.")
    return redirect("session", session_id)


@resilient
@login_required
@require_POST
def plan_release(request, plan_id, node):
    """The plan's owner or a lead hands a lapsed node back without taking it: its silent
    session is closed with outcome lapsed, and the node is ready (or waiting) again."""
    # Whether it lapsed is the rule's to say (`append_event` refuses a live session).
    session_id = plan_views.unclosed_session(plan_id, node)
    if session_id is None:
        return plan_answer(request, plan_id, 409, message=f"Not released: {node!r} is not lapsed.")
    try:
        append_event(
            session_id,
            vocabulary.CLOSE,
            {"outcome": vocabulary.LAPSED, "note": "released for another worker"},
            user=request.user,
            idempotency_key=server_key(request, "form"),
        )
    except (InvalidEvent, Conflict) as exc:
        return plan_answer(request, plan_id, 409, message=f"Not released: {exc.detail}")
    except Refused as exc:
        return plan_answer(request, plan_id, status_of(exc, STATUS_OF), message=exc.detail)
    if request.htmx:
        return plan_answer(request, plan_id, 200, message=f"Released {node!r}.")
    return redirect("plan", plan_id)


@resilient
@login_required
@require_POST
def plan_amend(request, plan_id):
    form = AmendForm(request.POST)
    status, message = 400, None
    if form.is_valid():
        try:
            append_event(
                plan_id,
                vocabulary.PLAN_AMEND,
                form.event_fields(),
                user=request.user,
                expected_seq=form.cleaned_data["expected_seq"],
                idempotency_key=server_key(request, "form"),
            )
            if not request.htmx:
                return redirect("plan", plan_id)
            return plan_answer(request, plan_id, 200, message="Plan amended.")
        except InvalidEvent as exc:
            add_errors(form, exc)
        except Conflict as exc:
            status, message = 409, f"Not amended: {exc.detail}"
        except Refused as exc:
            status, message = status_of(exc, STATUS_OF), exc.detail
    return plan_answer(request, plan_id, status, form, message)


# Metrics ------------------------------------------------------------------------------


@resilient
@login_required
@require_safe
def metrics_page(request):
    today = timezone.now().astimezone(UTC).date()
    initial = dict(zip(("since", "until"), metrics_window.default_days(today), strict=True))
    form = MetricsWindowForm(request.GET or initial)
    valid = form.is_valid()  # an invalid window is re-shown with its error, over the default
    window = form.cleaned_data if valid else initial
    first, end = metrics_window.whole_days(window["since"], window["until"])
    found = shapes.metrics_json(flow_model.metrics(first, end))
    days = list(found["flow"])
    context = {
        "form": form,
        "found": found,
        "days": days,
        "throughput_chart": charts.throughput(days, found["throughput"]),
        "flow_chart": charts.flow(days, found["flow"]),
        "times_chart": charts.times(found),
        "times": [(title, found[key]) for key, title in charts.TIMES],
        "outcomes": vocabulary.OUTCOMES,
        "flow_statuses": flow_metrics.FLOW_STATUSES,
        "presets": [(n, today - timedelta(days=n - 1), today) for n in (7, 14, 30, 90)],
    }
    return render(request, "sessions/metrics.html", context, status=200 if valid else 400)


# Where a new token waits in its maker's session for the page after the redirect.
NEW_TOKEN = "tower_new_token"


@resilient
@login_required
@require_safe
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


@resilient
@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def token_list(request):
    """A person's API tokens: make one (shown once), see when each was last used, revoke.

    A new token goes to the page after the redirect through the person's session, and is
    taken out of it as it is shown: reloading the page neither shows it again nor makes
    another token."""
    form = TokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        chosen = form.cleaned_data
        row, token = tokens.create_token(
            request.user,
            chosen["name"],
            read_only=chosen["scope"] == tokens.READ,
            expires_in_days=chosen["expires_in"],
        )
        request.session[NEW_TOKEN] = [row.name, token]
        return redirect("tokens")
    made = request.session.pop(NEW_TOKEN, None)
    context = {
        "form": form,
        "made": made,
        "tokens": tokens.visible_tokens(request.user),
        "now": timezone.now(),
        "api_url": request.build_absolute_uri("/api"),
        "mcp_config": mcp_client_config(
            request.build_absolute_uri(reverse("mcp")), made[1] if made else "<your token>"
        ),
    }
    return render(request, "sessions/tokens.html", context, status=400 if form.errors else 200)


def mcp_client_config(url: str, token: str) -> str:
    """An `mcpServers` entry an MCP client (Claude Code, Cursor…) takes as it is."""
    server = {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}
    return json.dumps({"mcpServers": {"control-tower": server}}, indent=2)


@resilient
@login_required
@require_POST
def token_revoke(request, token_id):
    if not tokens.revoke(request.user, token_id):
        raise Http404("No such token.")
    return redirect("tokens")


@resilient
@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def webhook_list(request):
    """A person's webhooks: add one (filters and payload), see each one's recent
    deliveries and their last status, send a ping, remove one."""
    form = SubscriptionForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            subscriptions.subscribe(request.user, **form.cleaned_data)
            return redirect("webhooks")
        except subscriptions.UnsafeWebhookUrl as refused:
            form.add_error("url", refused.detail)
        except subscriptions.TooManyWebhooks as refused:
            form.add_error(None, refused.detail)
    context = {
        "form": form,
        # Each webhook, its latest deliveries, and whether a ping waits for the worker
        # (its section then refreshes itself until the answer comes).
        "subscriptions": [
            (row, shown, any(d.position is None and not d.attempts for d in shown))
            for row in subscriptions.visible_subscriptions(request.user)
            for shown in [subscriptions.recent_deliveries(row)]
        ],
        "signature_header": webhooks.SIGNATURE_HEADER,
        "timestamp_header": webhooks.TIMESTAMP_HEADER,
        "delivery_header": webhooks.DELIVERY_HEADER,
    }
    return render(request, "sessions/webhooks.html", context, status=400 if form.errors else 200)


def _visible_subscription(request, subscription_id):
    found = subscriptions.visible_subscription(request.user, subscription_id)
    if found is None:
        raise Http404("No such webhook.")
    return found


@resilient
@login_required
@require_POST
def webhook_ping(request, subscription_id):
    subscriptions.request_ping(_visible_subscription(request, subscription_id))
    return redirect("webhooks")


@resilient
@login_required
@require_POST
def webhook_remove(request, subscription_id):
    subscriptions.remove(_visible_subscription(request, subscription_id))
    return redirect("webhooks")


def page_not_found(request, exception):
    """JSON for the API, the usual page elsewhere."""
    if request.path.startswith("/api/"):
        return http.not_found(request)
    return defaults.page_not_found(request, exception)
