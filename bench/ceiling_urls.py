"""The project's URLs plus a trivial view: the ceiling of what the same server, stack and
client can answer, against which `append_http.py` sets the append (issue 13)."""

from django.http import JsonResponse
from django.urls import include, path

from controltower.urls import handler404  # noqa: F401 (the project's, read off this module)


def ceiling(request):
    return JsonResponse({"ok": True})


urlpatterns = [path("bench/ceiling", ceiling), path("", include("controltower.urls"))]
