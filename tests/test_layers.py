"""The import-layers contract (tests/layers.py) holds for the app, and catches each kind
of violation planted in a module's source."""

import pytest

from tests.layers import check_app, check_source


def test_the_app_keeps_its_layers():
    assert [str(v) for v in check_app()] == []


PLANTED = [
    ("sessions.store.streams", "from sessions.readmodels import reading", "store may not import"),
    ("sessions.domain.plans", "from sessions import store", "domain may not import"),
    ("sessions.readmodels.reading", "from sessions.rules import append", "read models may not"),
    ("sessions.models", "from sessions.store import streams", "models imports only the domain"),
    ("sessions.web.views", "from sessions.api import schemas", "surface sessions.web imports"),
    ("sessions.api.routes", "from sessions.web.views import board", "surface sessions.api imports"),
    ("sessions.rules.append", "from django.db import transaction", "only the store imports"),
    ("sessions.readmodels.kept", "from django.db import connection", "only the store imports"),
    ("sessions.rules.identity", "Event.objects.filter(actor='a')", "only the store reads"),
    ("sessions.webhooks.worker", "connection.cursor()", "only the store opens cursors"),
    ("sessions.store.board", "from .. import http", "store may not import sessions.http"),
]


@pytest.mark.parametrize(("module", "line", "rule"), PLANTED)
def test_a_planted_violation_is_caught(module, line, rule):
    found = [str(v) for v in check_source(module, line + "\n")]
    assert any(rule in v for v in found), found


def test_a_relative_import_is_read_from_its_package():
    found = check_source("sessions.domain.plans", "from ..store import streams\n")
    assert "domain may not import sessions.store.streams (store)" in [v.rule for v in found]


def test_the_wiring_may_import_every_surface():
    assert (
        check_source(
            "sessions.urls", "from sessions.api import routes\nfrom sessions.web import views\n"
        )
        == []
    )


def test_a_layer_may_import_those_below_it():
    source = "from sessions import store\nfrom sessions.domain import plans\n"
    assert check_source("sessions.rules.append", source) == []
