"""No token acts as the forge integration's user (`GITHUB_ACTOR`), which may append work
and a merge's close to any session (issue 52): refused when made, as signing in is, and
refused when used, for one made before."""

import hashlib
import io

import pytest
from django.core.management import CommandError, call_command

from sessions.domain.vocabulary import START
from sessions.models import ApiToken
from sessions.rules.append import append_event
from sessions.rules.tokens import ForgeUserRefused, create_token
from sessions.store.users import service_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def forge_user(django_user_model, settings):
    return service_user(django_user_model, settings.GITHUB_ACTOR)


def test_a_token_for_the_forges_user_is_refused(forge_user):
    with pytest.raises(ForgeUserRefused):
        create_token(forge_user, "sneaky")
    assert not ApiToken.objects.exists()


def test_the_command_refuses_it_saying_why(forge_user):
    with pytest.raises(CommandError, match="GitHub integration's user"):
        call_command("create_token", forge_user.username, stdout=io.StringIO())
    assert not ApiToken.objects.exists()


def test_a_token_of_the_forges_user_made_before_acts_as_nobody(client, forge_user, alice):
    append_event("alices", START, {"title": "Mine"}, user=alice)
    token = "ct_made-before-this-was-refused"
    ApiToken.objects.create(
        user=forge_user,
        name="old",
        prefix=token[:11],
        digest=hashlib.sha256(token.encode()).hexdigest(),
        scope="write",
    )
    answer = client.post(
        "/api/sessions/alices/events",
        {"type": "session_close"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert answer.status_code == 401
    assert answer.json()["error"] == "forge_user"
