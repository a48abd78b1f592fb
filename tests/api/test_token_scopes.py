"""Tokens with a scope and an end (issue 26): a read token reads and nothing more, over
the API and MCP alike; an expired token is refused saying when; no token outlives its
user's deactivation."""

import asyncio
from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.models import ApiToken, Event
from sessions.rules.tokens import create_token
from tests.support.mcp import connected

pytestmark = pytest.mark.django_db


def post(client, token, path="/api/sessions", body=None):
    return client.post(
        path,
        body or {"title": "T"},
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )


def get(client, token, path="/api/sessions"):
    return client.get(path, headers={"Authorization": f"Bearer {token}"})


def test_a_read_token_reads(client, alice):
    _, token = create_token(alice, "dashboard", read_only=True)
    assert get(client, token).status_code == 200


def test_a_read_tokens_write_is_refused_with_403_and_writes_nothing(client, alice):
    _, token = create_token(alice, "dashboard", read_only=True)
    answer = post(client, token)
    assert answer.status_code == 403
    assert answer.json()["error"] == "read_only_token"
    assert "write scope" in answer.json()["detail"]
    assert not Event.objects.exists()


def test_an_expired_token_is_refused_saying_when(client, alice):
    row, token = create_token(alice, "ci", expires_in_days=30)
    ended = timezone.now() - timedelta(minutes=1)
    ApiToken.objects.filter(pk=row.pk).update(expires_at=ended)
    answer = get(client, token)
    assert answer.status_code == 401
    assert answer.json()["error"] == "token_expired"
    assert f"{ended:%Y-%m-%d %H:%M} UTC" in answer.json()["detail"]


def test_a_token_before_its_end_works(client, alice):
    _, token = create_token(alice, "ci", expires_in_days=1)
    assert post(client, token).status_code == 201


def test_no_token_outlives_its_users_deactivation(client, alice):
    _, token = create_token(alice, "agent")
    alice.is_active = False
    alice.save()
    assert get(client, token).status_code == 401


@pytest.mark.django_db(transaction=True)
def test_a_read_token_over_mcp_reads_but_may_not_write(live_server, alice):
    _, token = create_token(alice, "dashboard", read_only=True)

    async def steps():
        async with connected(live_server.url, token, "auto") as mcp:
            listed = await mcp.call_tool("list_sessions", {})
            started = await mcp.call_tool("start_session", {"title": "T"})
            return listed, started

    listed, started = asyncio.run(steps())
    assert not listed.is_error
    assert started.is_error
    assert "read_only_token" in started.content[0].text
    assert not Event.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_expired_token_over_mcp_is_refused_saying_so(live_server, alice):
    from tests.support.http import http_request

    row, token = create_token(alice, "ci", expires_in_days=1)
    ApiToken.objects.filter(pk=row.pk).update(expires_at=timezone.now() - timedelta(days=1))
    answer = http_request(live_server.url, "POST", "/mcp", {}, token=token)
    assert answer.status == 401
    assert answer.json()["error"] == "token_expired"
