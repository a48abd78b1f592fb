"""The import-layers contract (tests/layers.py) holds for the app, and catches each kind
of violation planted in a module's source."""

import pytest

from tests.support.layers import (
    MOST_LINES,
    check_app,
    check_circles,
    check_client,
    check_client_source,
    check_sizes,
    check_source,
    import_cycles,
    import_graph,
    lines_over,
)


def test_the_app_keeps_its_layers():
    assert [str(v) for v in check_app()] == []


PLANTED = [
    ("sessions.store.streams", "from sessions.readmodels import reading", "store may not import"),
    ("sessions.domain.plans", "from sessions import store", "domain may not import"),
    ("sessions.readmodels.reading", "from sessions.rules import append", "read models may not"),
    ("sessions.models", "from sessions.store import streams", "models imports only the domain"),
    ("sessions.web.views", "from sessions.api import answers", "surface sessions.web imports"),
    ("sessions.api.routes", "from sessions.web.views import board", "surface sessions.api imports"),
    ("sessions.rules.append", "from django.db import transaction", "only the store imports"),
    ("sessions.readmodels.kept", "from django.db import connection", "only the store imports"),
    ("sessions.rules.identity", "Event.objects.filter(actor='a')", "only the store reads"),
    ("sessions.webhooks.worker", "connection.cursor()", "only the store runs SQL"),
    ("sessions.store.board", "from .. import http", "store may not import sessions.http"),
    # Model managers, raw SQL and querysets outside the store.
    ("sessions.rules.tokens", "ApiToken.objects.filter(pk=1).update(x=1)", "reads a model's"),
    ("sessions.webhooks.worker", "Subscription.objects.all()", "only the store reads"),
    ("sessions.rules.identity", "sender._default_manager.filter(pk=1)", "._default_manager"),
    ("sessions.readmodels.board", "Event.objects.raw('SELECT 1')", "only the store"),
    ("sessions.web.views", "Delivery.raw('SELECT 1')", "only the store runs SQL (.raw())"),
    ("sessions.readmodels.board", "from django.db.models import QuerySet", "imports django.db"),
    # Django's database errors reach no surface: the store says `DatabaseUnavailable`.
    ("sessions.api.routes", "from django.db import OperationalError", "only the store imports"),
    ("sessions.web.views", "from django.db import InterfaceError", "only the store imports"),
    ("sessions.rules.append", "from django.db.utils import IntegrityError", "only the store"),
    # The domain is pure; the store knows no HTTP.
    ("sessions.domain.plans", "import django", "the domain imports no Django"),
    ("sessions.domain.vocabulary", "from django.utils import timezone", "imports no Django"),
    ("sessions.store.connections", "from django.http import HttpRequest", "knows no HTTP"),
    ("sessions.store.tokens", "import ninja", "the store knows no HTTP"),
    # One door for settings.
    ("sessions.rules.forge", "from django.conf import settings", "only sessions.config reads"),
    ("sessions.web.views.board", "from django.conf import settings", "Django's settings"),
    # The webhook worker is an outgoing surface: the web does not reach into it.
    ("sessions.web.views", "from sessions.webhooks import transport", "surface sessions.web"),
    ("sessions.rules.subscriptions", "from sessions.webhooks import worker", "rules may not"),
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


@pytest.mark.parametrize(
    "module",
    ["sessions.store.tokens", "sessions.admin", "sessions.management.commands.ensure_admin"],
)
def test_the_store_and_djangos_own_surfaces_may_use_model_managers(module):
    assert check_source(module, "User.objects.exists()\n") == []


def test_the_deliver_command_may_start_the_webhook_worker():
    source = "from sessions.webhooks.worker import Pace\n"
    assert check_source("sessions.management.commands.deliver", source) == []


def test_no_room_of_the_app_or_the_client_is_over_the_budget():
    assert check_sizes() == []


def test_a_room_over_the_budget_is_named_with_its_length():
    sources = {"big.py": "x = 1\n" * (MOST_LINES + 1), "small.py": "x = 1\n"}
    assert lines_over(MOST_LINES, sources) == [f"big.py: {MOST_LINES + 1} lines"]


def test_no_two_modules_of_the_app_or_the_client_import_each_other():
    assert check_circles() == []


def test_a_planted_circle_is_caught_even_through_a_lazy_import():
    sources = {
        "ct.hook": ("from ct import flusher\n", False),
        "ct.flusher": ("def log():\n    from ct.hook import log\n", False),
        "ct.text": ("import ct.hook\n", False),
    }
    assert import_cycles(import_graph(sources)) == [["ct.flusher", "ct.hook"]]


def test_a_package_gathering_its_own_modules_is_no_circle():
    sources = {
        "sessions.store": ("from sessions.store.streams import read\n", True),
        "sessions.store.streams": ("from sessions.store import database\n", False),
        "sessions.store.database": ("x = 1\n", False),
    }
    assert import_cycles(import_graph(sources)) == []


def test_the_client_reads_its_environment_through_one_door():
    assert [str(v) for v in check_client()] == []


@pytest.mark.parametrize(
    "source",
    ['os.environ.get("CT_URL")', 'os.getenv("CT_URL")', "from os import environ", "os.environ"],
)
def test_a_planted_read_of_the_environment_is_caught(source):
    found = check_client_source("ct.claude_code", source)
    assert [v.rule for v in found] == ["only ct.environment reads the environment"]


def test_the_environment_door_may_read_it():
    assert check_client_source("ct.environment", 'os.environ.get("CT_URL")') == []
