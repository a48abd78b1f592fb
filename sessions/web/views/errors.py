"""The pages of an error."""

from django.views import defaults

from sessions import http


def page_not_found(request, exception):
    """JSON for the API, the usual page elsewhere."""
    if request.path.startswith("/api/"):
        return http.not_found(request)
    return defaults.page_not_found(request, exception)
