import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User

from sessions import vocabulary
from sessions.append import append_event

CONFORMANCE = Path(__file__).resolve().parent.parent.parent / "shared" / "conformance"


def conformance_expected():
    return json.loads((CONFORMANCE / "expected.json").read_text(encoding="utf-8"))


def conformance_now():
    return datetime.fromisoformat(conformance_expected()["now"]).astimezone(UTC)


@pytest.fixture
def make_user(db):
    def make(username, *, act_on_any=False, **extra):
        user = User.objects.create_user(username=username, password="pw-" + username, **extra)
        if act_on_any:
            user.user_permissions.add(
                Permission.objects.get(
                    codename="act_on_any_session", content_type__app_label="tower"
                )
            )
            user = User.objects.get(pk=user.pk)  # fresh permission cache
        return user

    return make


@pytest.fixture
def alice(make_user):
    return make_user("alice")


@pytest.fixture
def bob(make_user):
    return make_user("bob")


@pytest.fixture
def lead(make_user):
    return make_user("lead", act_on_any=True)


@pytest.fixture
def started(alice):
    """A session `s1` that alice started, with a first next action."""
    append_event("s1", vocabulary.START, {"title": "Ship it", "note": "write tests"}, user=alice)
    return "s1"
