"""Management commands that set up users and tokens."""

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from sessions.models import ApiToken
from sessions.rules.tokens import bearer_for_token


def run(*args):
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command(*args, stdout=stdout, stderr=stderr)
    return stdout.getvalue(), stderr.getvalue()


def test_create_token_prints_a_working_token_once(alice):
    stdout, stderr = run("create_token", "alice", "--name", "ci-agent")
    token = stdout.strip()
    assert bearer_for_token(token).user == alice
    assert ApiToken.objects.get().name == "ci-agent"
    assert "only this once" in stderr


def test_create_token_for_an_unknown_user_fails_clearly(db):
    with pytest.raises(CommandError, match="no user 'ghost'"):
        run("create_token", "ghost")


def test_ensure_admin_creates_a_superuser_with_a_printed_password(db):
    stdout, _ = run("ensure_admin")
    password = stdout.split("password ")[1].split(" ")[0]
    admin = User.objects.get(username="admin")
    assert admin.is_superuser and admin.check_password(password)


def test_the_first_password_stands_in_a_box_saying_where_and_how_to_reset_it(db):
    stdout, _ = run("ensure_admin", "--url", "http://127.0.0.1:8123/")
    lines = stdout.strip().splitlines()
    assert lines[0].startswith("┌") and lines[-1].startswith("└")
    assert "Sign in at http://127.0.0.1:8123/ as admin" in stdout
    assert "manage.py changepassword admin" in stdout
    assert len({len(line) for line in lines}) == 1  # a box: every line as wide


def test_ensure_admin_does_nothing_once_a_user_exists(alice):
    assert run("ensure_admin") == ("", "")
    assert not User.objects.filter(username="admin").exists()


def test_create_token_read_only_with_an_end(alice):
    stdout, _ = run("create_token", "alice", "--read-only", "--expires-days", "30")
    bearer = bearer_for_token(stdout.strip())
    assert bearer.read_only
    row = ApiToken.objects.get()
    assert 29 <= (row.expires_at - row.created_at).days <= 30
