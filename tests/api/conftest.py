"""What the API's tests share: a token each for alice and bob, a started session, and
how an error answer must look."""

import pytest

from sessions.models import Event


@pytest.fixture
def alice_token(alice, token_for):
    return token_for(alice)


@pytest.fixture
def bob_token(bob, token_for):
    return token_for(bob)


@pytest.fixture
def session_s1(api, alice_token):
    assert (
        api("POST", "/api/sessions", {"id": "s1", "title": "Ship it"}, token=alice_token).status
        == 201
    )
    return "/api/sessions/s1"


def count():
    return Event.objects.count()


def assert_error(response, status, code):
    assert response.status == status, response.body
    assert response.headers["Content-Type"].split(";")[0] == "application/json"
    body = response.json()
    assert body["error"] == code
    assert isinstance(body["detail"], str) and body["detail"]
    return body
