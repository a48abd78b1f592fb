"""/api/me over real HTTP: who the token acts as."""

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_me_names_the_tokens_user(api, alice, token_for):
    answer = api("GET", "/api/me", token=token_for(alice))
    assert answer.status == 200
    assert answer.json() == {"username": "alice"}
