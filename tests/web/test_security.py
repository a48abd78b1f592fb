"""Who may do what, on every page, form and endpoint; hostile input writes nothing."""

import pytest
from django.test import Client
from django.utils import timezone

from sessions.domain.vocabulary import START
from sessions.models import ApiToken, Event
from sessions.rules.append import append_event
from sessions.rules.tokens import create_token

pytestmark = pytest.mark.django_db(transaction=True)

WEB_ROLES = ["anonymous", "member", "owner", "lead", "staff"]
API_ROLES = [*WEB_ROLES, "revoked token"]


@pytest.fixture
def people(make_user):
    return {
        "owner": make_user("owner"),
        "member": make_user("member"),
        "lead": make_user("lead", act_on_any=True),
        "staff": make_user("staff", is_staff=True),
    }


@pytest.fixture
def session_of_owner(people):
    append_event("s1", START, {"title": "Owned work"}, user=people["owner"])
    return "s1"


@pytest.fixture
def web(people):
    def client_for(role):
        client = Client()
        if role != "anonymous":
            client.force_login(people[role])
        return client

    return client_for


@pytest.fixture
def api_token(people):
    def token_for(role):
        if role == "anonymous":
            return None
        if role == "revoked token":
            row, token = create_token(people["owner"], "revoked")
            ApiToken.objects.filter(pk=row.pk).update(revoked_at=timezone.now())
            return token
        return create_token(people[role], role)[1]

    return token_for


# Expected status per role, and whether the request appends an event when allowed.
WEB_MATRIX = {
    ("GET", "/"): ({"anonymous": 302}, 200),
    ("GET", "/sessions/s1/"): ({"anonymous": 302}, 200),
    ("GET", "/admin/tower/event/"): (
        {"anonymous": 302, "member": 302, "owner": 302, "lead": 302},
        403,
    ),
    ("POST", "/sessions/start"): ({"anonymous": 302}, 302),
    ("POST", "/sessions/s1/block"): ({"anonymous": 302, "member": 403, "staff": 403}, 302),
    ("POST", "/sessions/s1/close"): ({"anonymous": 302, "member": 403, "staff": 403}, 302),
}
FORM_DATA = {"title": "New", "reason": "stop", "note": "done"}


@pytest.mark.parametrize("role", WEB_ROLES)
@pytest.mark.parametrize(("method", "path"), list(WEB_MATRIX))
def test_web_permissions(web, session_of_owner, role, method, path):
    refusals, allowed = WEB_MATRIX[(method, path)]
    expected = refusals.get(role, allowed)
    permitted = role not in refusals
    before = Event.objects.count()
    client = web(role)
    response = client.get(path) if method == "GET" else client.post(path, FORM_DATA)
    assert response.status_code == expected
    appended = Event.objects.count() - before
    assert appended == (1 if method == "POST" and permitted else 0)


API_MATRIX = {
    ("GET", "/api/sessions"): ({}, 200),
    ("GET", "/api/sessions/s1"): ({}, 200),
    ("GET", "/api/sessions/s1/events"): ({}, 200),
    ("GET", "/api/sessions/s1/events.jsonl"): ({}, 200),
    ("POST", "/api/sessions"): ({}, 201),
    ("POST", "/api/sessions/s1/events"): ({"member": 403, "staff": 403}, 201),
}
API_BODIES = {
    "/api/sessions": {"title": "Started by API"},
    "/api/sessions/s1/events": {"type": "session_block", "reason": "stop"},
}
UNAUTHENTICATED = {"anonymous": 401, "revoked token": 401}


@pytest.mark.parametrize("role", API_ROLES)
@pytest.mark.parametrize(("method", "path"), list(API_MATRIX))
def test_api_permissions(api, api_token, session_of_owner, role, method, path):
    refusals, allowed = API_MATRIX[(method, path)]
    expected = {**refusals, **UNAUTHENTICATED}.get(role, allowed)
    before = Event.objects.count()
    response = api(
        method, path, API_BODIES.get(path) if method == "POST" else None, token=api_token(role)
    )
    assert response.status == expected, response.body
    assert Event.objects.count() - before == (1 if expected == 201 else 0)


def test_a_token_acts_as_its_user_only(api, people, session_of_owner):
    _, member_token = create_token(people["member"], "member")
    body = {"type": "session_close"}
    response = api("POST", "/api/sessions/s1/events", body, token=member_token)
    assert response.status == 403
    assert Event.objects.count() == 1


@pytest.mark.parametrize(
    "data",
    [
        {"reason": "x" * 2001},
        {"reason": "nul \x00 byte"},
        {"reason": ""},
        {"expected_seq": "-3", "reason": "r"},
    ],
)
def test_hostile_form_input_is_a_clear_400_and_writes_nothing(web, session_of_owner, data):
    response = web("owner").post("/sessions/s1/block", data)
    assert response.status_code == 400
    assert Event.objects.count() == 1


def test_a_huge_form_body_is_refused_and_writes_nothing(web, session_of_owner):
    response = web("owner").post("/sessions/s1/block", {"reason": "x" * 100_000})
    assert 400 <= response.status_code < 500
    assert Event.objects.count() == 1


def test_a_json_body_to_a_form_is_refused_and_writes_nothing(web, session_of_owner):
    response = web("owner").post(
        "/sessions/s1/block", '{"reason": "r"}', content_type="application/json"
    )
    assert response.status_code == 400
    assert Event.objects.count() == 1


@pytest.mark.parametrize("path", ["/api/sessions/..%2F..%2Fetc", "/api/sessions/../../etc/passwd"])
def test_ids_with_dot_dot_slash_find_nothing(api, api_token, session_of_owner, path):
    response = api("GET", path, token=api_token("owner"))
    assert response.status == 404


def test_a_start_with_a_dot_dot_slash_id_is_400(api, api_token):
    body = {"id": "../etc", "title": "escape"}
    assert api("POST", "/api/sessions", body, token=api_token("owner")).status == 400
    assert Event.objects.count() == 0
