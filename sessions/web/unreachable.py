"""Pages and forms when the database connection drops: run the request again on a new
connection, and when the database stays away, say so and write nothing.

The API runs each route again itself (`sessions.http.retrying`); `resilient` does the
same for every page, sign-in session and user included (`login_required` reads them
before the view runs, so it wraps that too). A form's post carries its own
idempotency key for the request (`server_key`), so running it again cannot append
twice. When every attempt fails, a page that needs no database says that nothing was
saved and shows what was sent, with a button to send it again.
"""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from sessions.http import retrying_else
from sessions.store.connections import DatabaseUnavailable

# Never shown back: the form's own token is made anew for the page.
_NOT_ECHOED = {"csrfmiddlewaretoken"}


def unreachable(request: HttpRequest, fault: DatabaseUnavailable) -> HttpResponse:
    """503: the database is unreachable (or stopped a request that ran too long),
    nothing was saved; a post is shown again."""
    sent = [
        (name, value)
        for name, values in request.POST.lists()
        if name not in _NOT_ECHOED
        for value in values
    ]
    context = {
        "sent": sent,
        "action": request.get_full_path(),
        "post": request.method == "POST",
        "detail": fault.detail,
    }
    return render(request, "sessions/unreachable.html", context, status=503)


# `view`, sign-in included, run again on a new connection when it loses its own; when the
# database stays away, `unreachable`. Outermost on every page, so that the sign-in
# session and the user, read by `login_required`, are covered.
resilient = retrying_else(unreachable)
