"""The moment a page is asked for as of (`?at=`), read by the API's rule."""

import functools
from datetime import datetime

from django.http import HttpRequest, HttpResponse

from sessions.domain import moments


class BadMoment(ValueError):
    pass


def as_of_moment(request: HttpRequest) -> datetime | None:
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


def answers_bad_moments(view):
    """A page asked for as of a moment it cannot read answers 400, saying why."""

    @functools.wraps(view)
    def page(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except BadMoment as exc:
            return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")

    return page
