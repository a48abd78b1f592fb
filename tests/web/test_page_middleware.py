"""Middleware that serves pages alone (`sessions.http.PageMessageMiddleware`) is skipped for the
agents' requests, and still runs, and is still found by Django's checks, for the pages."""

import pytest
from django.contrib.messages.middleware import MessageMiddleware
from django.core import checks
from django.http import HttpResponse
from django.test import RequestFactory

from sessions.http import AGENT_PREFIXES, PageMessageMiddleware


def _answered(path: str) -> list:
    """The requests the view behind `PageMessageMiddleware` saw for a GET of `path`."""
    seen = []

    def view(request):
        seen.append(request)
        return HttpResponse("ok")

    request = RequestFactory().get(path)
    request.session = {}  # the session middleware's part, which messages stores into
    PageMessageMiddleware(view)(request)
    return seen


@pytest.mark.parametrize("prefix", AGENT_PREFIXES)
def test_an_agents_request_skips_the_page_messages(prefix):
    [request] = _answered(prefix + "sessions")
    assert not hasattr(request, "_messages")


@pytest.mark.parametrize("path", ["/", "/plans/", "/sessions/s1/", "/apis"])
def test_a_pages_request_gets_its_messages(path):
    [request] = _answered(path)
    assert hasattr(request, "_messages")


def test_djangos_checks_find_the_messages_middleware():
    assert issubclass(PageMessageMiddleware, MessageMiddleware)
    found = [e.id for e in checks.run_checks(tags=[checks.Tags.admin])]
    assert "admin.E409" not in found
