"""How the web surface serves a page and posts a form, written once for every view.

- `page(route, name)` and `action(route, name)` declare a view together with its URL:
  sign-in required, the methods it answers, the request run again on a new connection
  when the database drops one (`resilient`, outermost, so that sign-in is covered), and
  for a page that can be asked for as of a moment, a 400 for a moment it cannot read.
  `urlpatterns()` lists every declared view in the order declared.
- `post_event` turns a form's post into an append under the request's own idempotency
  key, and a refusal into its status and, for invalid input, errors beside the form's
  fields; each view then shows the card, the page or the error as its page does.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path, register_converter
from django.utils import timezone
from django.views.decorators.http import require_http_methods
from django_htmx.http import trigger_client_event

from sessions.http import server_key
from sessions.readmodels import board as board_model
from sessions.rules.append import append_event
from sessions.rules.appends import Appended
from sessions.rules.refusals import (
    InvalidEvent,
    Refused,
)
from sessions.web.forms import ACTIONS, Action
from sessions.web.moments import answers_bad_moments
from sessions.web.unreachable import resilient

# The parts of the web's URLs that name a stream.
SESSION = "<str:session_id>"
PLAN = "<str:plan_id>"
READING = ("GET", "HEAD")
WITH_FORM = ("GET", "HEAD", "POST")  # a page that is also its own form's target


class ActionSlug:
    """`<action:…>` in a URL: the slug of one of the actions table's actions (`ACTIONS`),
    given to the view as the `Action` itself; any other slug matches no URL."""

    regex = "|".join(ACTIONS)

    def to_python(self, value: str) -> Action:
        return ACTIONS[value]

    def to_url(self, value: Action | str) -> str:
        return value.slug if isinstance(value, Action) else value


register_converter(ActionSlug, "action")

_ROUTES: list[URLPattern] = []


def page(
    route: str, name: str, *, methods: Sequence[str] = READING, as_of: bool = False
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Declare a view at `route` named `name` (`as_of`: it reads `?at=`)."""

    def declare(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        inner = answers_bad_moments(view) if as_of else view
        served = resilient(login_required(require_http_methods(list(methods))(inner)))
        _ROUTES.append(path(route, served, name=name))
        return served

    return declare


def action(route: str, name: str) -> Callable[[Callable[..., HttpResponse]], Callable]:
    """Declare a view that a form posts to."""
    return page(route, name, methods=("POST",))


def urlpatterns() -> list[URLPattern]:
    return list(_ROUTES)


@dataclass(frozen=True)
class Posted:
    """What a form's append came to: the event appended, or the refusal and its status."""

    status: int
    appended: Appended | None = None
    refusal: Refused | None = None

    @property
    def succeeded(self) -> bool:
        return self.refusal is None


def post_event(
    request: HttpRequest,
    stream_id: str,
    event_type: str,
    fields: dict,
    *,
    expected_seq: int | None = None,
    form: object | None = None,
) -> Posted:
    """Append the posted event as the signed-in person, under the request's own
    idempotency key (so that running the request again appends once). An invalid
    input's reasons go beside `form`'s fields, when there is a form."""
    try:
        appended = append_event(
            stream_id,
            event_type,
            fields,
            user=request.user,
            expected_seq=expected_seq,
            idempotency_key=server_key(request, "form"),
        )
    except Refused as refusal:
        if form is not None and isinstance(refusal, InvalidEvent):
            add_errors(form, refusal)
        return Posted(refusal.status, refusal=refusal)
    return Posted(200, appended=appended)


def post_form(request: HttpRequest, stream_id: str, event_type: str, form) -> Posted:
    """`post_event` of a valid form: its event's fields, and the seq it was shown at
    when it carries one."""
    return post_event(
        request,
        stream_id,
        event_type,
        form.event_fields(),
        expected_seq=form.cleaned_data.get("expected_seq"),
        form=form,
    )


def add_errors(form, refusal: InvalidEvent) -> None:
    """Show an `InvalidEvent`'s reasons next to the form's fields."""
    for name, problem in refusal.errors.items():
        form.add_error(name if name in form.fields else None, f"This {problem}.")


def page_version() -> str:
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
