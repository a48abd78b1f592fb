"""What every router of the API shares, over real HTTP: malformed requests refused
with the one error shape, bearer tokens and their refusals, the public OpenAPI document
and reference page."""

import pytest

from sessions.models import ApiToken
from sessions.rules.tokens import digest
from tests.api.conftest import assert_error, count

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("raw", [b"{nope", b'{"type": "\xff"}'], ids=["not JSON", "not UTF-8"])
def test_a_body_that_is_not_utf8_json_is_400(api, session_s1, alice_token, raw):
    headers = {"Content-Type": "application/json"}
    response = api("POST", f"{session_s1}/events", raw, token=alice_token, headers=headers)
    assert_error(response, 400, "invalid")
    assert count() == 1


def test_a_json_array_body_is_400(api, session_s1, alice_token):
    assert_error(api("POST", f"{session_s1}/events", [1, 2], token=alice_token), 400, "invalid")


def test_a_wrong_content_type_is_415(api, session_s1, alice_token):
    response = api(
        "POST",
        f"{session_s1}/events",
        b"type=session_close",
        token=alice_token,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert_error(response, 415, "unsupported_media_type")
    assert count() == 1


def test_a_huge_body_is_413(api, session_s1, alice_token):
    body = {"type": "session_block", "reason": "x" * 200_000}
    assert_error(api("POST", f"{session_s1}/events", body, token=alice_token), 413, "too_large")
    assert count() == 1


def test_a_wrong_method_is_405(api, session_s1, alice_token):
    response = api("DELETE", session_s1, token=alice_token)
    assert_error(response, 405, "method_not_allowed")
    assert count() == 1


def test_an_unknown_api_path_is_a_json_404(api, alice_token):
    assert_error(api("GET", "/api/nothing/here", token=alice_token), 404, "not_found")


def test_no_token_is_401(api, session_s1):
    assert_error(api("GET", session_s1), 401, "unauthorized")
    assert_error(api("POST", "/api/sessions", {"title": "t"}), 401, "unauthorized")


@pytest.mark.parametrize("header", ["Bearer ct_wrong", "Basic YWxpY2U6cHc=", "Bearer", "ct_x"])
def test_a_bad_token_is_401(api, session_s1, header):
    assert_error(api("GET", session_s1, headers={"Authorization": header}), 401, "unauthorized")


def test_a_revoked_token_is_401(api, session_s1, alice, token_for):
    token = token_for(alice, "to revoke")
    ApiToken.objects.filter(name="to revoke").update(revoked_at="2026-01-01T00:00:00Z")
    assert_error(api("GET", session_s1, token=token), 401, "unauthorized")
    body = {"type": "session_close"}
    assert_error(api("POST", f"{session_s1}/events", body, token=token), 401, "unauthorized")
    assert count() == 1


def test_a_token_of_an_inactive_user_is_401(api, session_s1, alice, alice_token):
    alice.is_active = False
    alice.save()
    assert_error(api("GET", session_s1, token=alice_token), 401, "unauthorized")


def test_tokens_are_stored_as_a_digest_and_a_prefix_only(alice, token_for):
    token = token_for(alice)
    row = ApiToken.objects.get()
    assert row.digest == digest(token) and token not in (row.digest, row.prefix)
    assert token.startswith(row.prefix) and len(row.prefix) < len(token) // 3


def test_using_a_token_records_when_it_was_last_used(api, session_s1, alice_token):
    api("GET", session_s1, token=alice_token)
    assert ApiToken.objects.get().last_used_at is not None


def test_a_signed_in_browser_session_may_read_but_not_write(api, client, alice, session_s1):
    client.force_login(alice)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    assert api("GET", session_s1, headers={"Cookie": cookie}).status == 200
    body = {"type": "session_close"}
    response = api("POST", f"{session_s1}/events", body, headers={"Cookie": cookie})
    assert_error(response, 401, "unauthorized")
    assert count() == 1


def test_the_openapi_schema_is_public_and_describes_every_endpoint(api):
    response = api("GET", "/api/openapi.json")
    assert response.status == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert set(schema["paths"]) == {
        "/api/sessions",
        "/api/sessions/{session_id}",
        "/api/sessions/{session_id}/events",
        "/api/sessions/{session_id}/events.jsonl",
        "/api/plans",
        "/api/plans/{plan_id}",
        "/api/plans/{plan_id}/events",
        "/api/plans/{plan_id}/claim",
        "/api/plans/{plan_id}/events.jsonl",
        "/api/metrics",
        "/api/feed",
        "/api/reservations",
        "/api/me",
    }


def test_the_api_docs_page_is_public(api):
    response = api("GET", "/api/")
    assert response.status == 200 and b"openapi.json" in response.body
