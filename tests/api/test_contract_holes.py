"""Each hole an outside tool or an adversarial pass found in the contract (issue 9),
reproduced over real HTTP: every one is now a clear 4xx that writes nothing."""

import pytest

from sessions.domain.vocabulary import BLOCK, START
from sessions.models import Event
from sessions.rules.append import append_event

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def alice_token(alice, token_for):
    return token_for(alice)


@pytest.fixture
def s1(alice):
    append_event("s1", START, {"title": "Ship it"}, user=alice)
    return "/api/sessions/s1"


def assert_json_error(response, status, code="invalid"):
    assert response.status == status, response.body
    assert response.headers["Content-Type"].split(";")[0] == "application/json"
    assert response.json()["error"] == code


def test_a_deeply_nested_body_is_a_400_not_a_recursion_error(api, s1, alice_token):
    body = b"[" * 2000
    response = api(
        "POST",
        f"{s1}/events",
        body,
        token=alice_token,
        headers={"Content-Type": "application/json"},
    )
    assert_json_error(response, 400)


@pytest.mark.parametrize(
    "query",
    [
        "page=99999999999999999999",
        "page=999999999999999999",
        "stale=false&page_size=105&page=63677165852727718182912",
        "page=%C2%B2",
        "page_size=%C2%B2",
        "stale_after=%C2%B2",
    ],
)
def test_out_of_range_and_non_ascii_numbers_are_400(api, s1, alice_token, query):
    assert_json_error(api("GET", f"/api/sessions?{query}", token=alice_token), 400)


@pytest.mark.parametrize(
    "path",
    [
        "/api/sessions?q=%00",
        "/api/sessions?owner=%00",
        "/api/sessions/%00",
        "/api/sessions/s1?stale_after=%00",
    ],
)
def test_a_nul_in_an_api_path_or_query_is_a_json_400(api, s1, alice_token, path):
    assert_json_error(api("GET", path, token=alice_token), 400)


@pytest.mark.parametrize("path", ["/sessions/%00/", "/?owner=%00", "/?q=a%00b"])
def test_a_nul_in_a_page_address_is_a_400(client, alice, s1, path):
    client.force_login(alice)
    assert client.get(path).status_code == 400


@pytest.mark.parametrize("method", ["PUT", "DELETE", "POST"])
def test_writing_to_the_schema_is_a_json_405(api, method):
    response = api(method, "/api/openapi.json")
    assert_json_error(response, 405, "method_not_allowed")
    assert "GET" in response.headers["Allow"]


def test_a_null_for_a_field_the_type_does_not_have_is_refused(api, s1, alice_token):
    body = {"type": "session_block", "reason": "r", "title": None}
    response = api("POST", f"{s1}/events", body, token=alice_token)
    assert_json_error(response, 400)
    assert "title" in response.json()["fields"]
    assert Event.objects.count() == 1


@pytest.mark.parametrize(
    "title", ["Fix \u202eelif", "zero\u200bwidth", "bell\x07", "two\nlines", "ansi \x1b[31m"]
)
def test_titles_that_could_spoof_the_board_are_refused(api, alice_token, title):
    response = api("POST", "/api/sessions", {"title": title}, token=alice_token)
    assert_json_error(response, 400)
    assert "title" in response.json()["fields"]
    assert Event.objects.count() == 0


@pytest.mark.parametrize(
    "title",
    ["👨\u200d💻 pairing", "❤\ufe0f\u200d🔥 hot fix", "🏳\ufe0f\u200d🌈 pride", "می\u200cخواهم"],
)
def test_titles_of_emoji_sequences_and_joined_scripts_are_accepted(api, alice_token, title):
    response = api("POST", "/api/sessions", {"title": title}, token=alice_token)
    assert response.status == 201, response.body
    assert response.json()["title"] == title


def test_a_body_that_gives_a_key_twice_is_refused_and_writes_nothing(api, s1, alice_token):
    body = b'{"type": "session_progress", "type": "session_close"}'
    response = api(
        "POST",
        "/api/sessions/s1/events",
        body,
        token=alice_token,
        headers={"Content-Type": "application/json"},
    )
    assert_json_error(response, 400)
    assert "'type' is given twice" in response.json()["detail"]
    assert Event.objects.count() == 1


def test_a_block_with_a_note_is_refused_as_the_schema_says(api, s1, alice_token):
    response = api(
        "POST",
        f"{s1}/events",
        {"type": "session_block", "reason": "r", "note": "n"},
        token=alice_token,
    )
    assert_json_error(response, 400)


def test_a_null_id_is_refused_as_the_schema_says_it_is_optional_not_nullable(api, alice_token):
    # The schema offers "id" as a string or absent; null is what "absent" means here.
    response = api("POST", "/api/sessions", {"id": None, "title": "0"}, token=alice_token)
    assert response.status == 201


# Idempotency keys are their actor's, and come after the permission check.


def test_another_users_key_on_a_session_is_still_403(api, s1, alice, bob, token_for):
    append_event("s1", BLOCK, {"reason": "r"}, user=alice, idempotency_key="blk-1")
    response = api(
        "POST",
        f"{s1}/events",
        {"type": "session_unblock"},
        token=token_for(bob),
        headers={"Idempotency-Key": "blk-1"},
    )
    assert_json_error(response, 403, "forbidden")


def test_keys_of_different_actors_never_meet(api, s1, lead, alice_token, token_for):
    lead_block = api(
        "POST",
        f"{s1}/events",
        {"type": "session_block", "reason": "lead"},
        token=token_for(lead),
        headers={"Idempotency-Key": "blk-1"},
    )
    assert lead_block.status == 201
    close = api(
        "POST",
        f"{s1}/events",
        {"type": "session_close", "note": "mine"},
        token=alice_token,
        headers={"Idempotency-Key": "blk-1"},
    )
    assert close.status == 201
    assert close.json()["event"]["type"] == "session_close"
    assert close.json()["session"]["status"] == "closed"


# The reference page


def test_the_api_reference_page_loads_only_its_own_static_files(api):
    page = api("GET", "/api/").body.decode()
    assert "swagger-ui" in page
    assert "http://" not in page.replace("http://127.0.0.1", "") and "https://" not in page
