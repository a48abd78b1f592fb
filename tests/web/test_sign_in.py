"""Sign-in is throttled (django-axes): wrong passwords for one username from one
address lock that pair out for a while, on the sign-in page and the admin alike."""

import pytest
from django.conf import settings
from django.test import Client

LIMIT = settings.AXES_FAILURE_LIMIT


@pytest.fixture
def admin_user(make_user):
    return make_user("boss", is_staff=True, is_superuser=True)


def sign_in(client, path, username, password):
    return client.post(path, {"username": username, "password": password})


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_the_right_password_works_before_the_limit(db, admin_user, path):
    client = Client()
    for _ in range(LIMIT - 1):
        assert sign_in(client, path, "boss", "wrong").status_code == 200
    assert sign_in(client, path, "boss", "pw-boss").status_code == 302


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_after_the_limit_even_the_right_password_is_refused(db, admin_user, path):
    client = Client()
    for _ in range(LIMIT):
        sign_in(client, path, "boss", "wrong")
    response = sign_in(client, path, "boss", "pw-boss")
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_a_lockout_is_for_that_username_only(db, admin_user, alice):
    client = Client()
    for _ in range(LIMIT):
        sign_in(client, "/accounts/login/", "boss", "wrong")
    assert sign_in(client, "/accounts/login/", "alice", "pw-alice").status_code == 302
