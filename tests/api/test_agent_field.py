"""Which agent wrote an event, over real HTTP (docs/rules.md, "Vocabulary": `agent`): any
session event may carry it, its answer and the session's view say it, a claim puts it on
the start, the log keeps it; too long or holding control characters, refused naming the
field, writing nothing."""

import pytest

from sessions.domain import jsonl
from sessions.models import Event
from tests.api.conftest import assert_error, count

pytestmark = pytest.mark.django_db(transaction=True)

CODEX = "codex 0.169.0"


def start(api, token, **extra):
    return api("POST", "/api/sessions", {"id": "s1", "title": "Ship", **extra}, token=token)


def test_a_start_and_an_event_say_which_agent_wrote_them(api, alice_token):
    assert start(api, alice_token, agent=CODEX).json()["agent"] == CODEX
    body = {"type": "session_progress", "note": "Edit a.py", "agent": CODEX}
    answer = api("POST", "/api/sessions/s1/events", body, token=alice_token).json()
    assert answer["event"]["agent"] == CODEX
    assert list(answer["event"])[:6] == ["session", "seq", "type", "timestamp", "actor", "agent"]


def test_an_event_a_person_sends_in_person_carries_no_agent(api, alice_token):
    start(api, alice_token, agent=CODEX)
    body = {"type": "session_block", "reason": "which database?"}
    answer = api("POST", "/api/sessions/s1/events", body, token=alice_token).json()
    assert "agent" not in answer["event"]
    assert answer["session"]["agent"] is None  # the latest hand was alice's own


def test_the_view_names_the_agent_of_the_latest_activity_not_of_a_message(
    api, alice_token, bob_token
):
    start(api, alice_token, agent=CODEX)
    api(
        "POST",
        "/api/sessions/s1/events",
        {"type": "session_message", "note": "hi"},
        token=bob_token,
    )
    assert api("GET", "/api/sessions/s1", token=alice_token).json()["agent"] == CODEX


def test_a_claim_puts_its_agent_on_the_start(api, alice_token):
    plan = {"id": "p", "title": "P", "nodes": [{"key": "a", "title": "A"}]}
    api("POST", "/api/plans", plan, token=alice_token)
    claimed = api("POST", "/api/plans/p/claim", {"agent": CODEX}, token=alice_token)
    assert claimed.status == 201, claimed.body
    assert claimed.json()["agent"] == CODEX
    assert Event.objects.get(session=claimed.json()["id"]).agent == CODEX


@pytest.mark.parametrize("agent", ["x" * 101, "codex\u00000.1", "codex\n0.1", "", " "])
def test_a_bad_agent_is_400_naming_the_field_and_writes_nothing(api, alice_token, agent):
    start(api, alice_token)
    body = {"type": "session_progress", "agent": agent}
    refused = assert_error(
        api("POST", "/api/sessions/s1/events", body, token=alice_token), 400, "invalid"
    )
    assert "agent" in refused["detail"]
    assert count() == 1


def test_a_bad_agent_on_a_claim_is_400_and_claims_nothing(api, alice_token):
    plan = {"id": "p", "title": "P", "nodes": [{"key": "a", "title": "A"}]}
    api("POST", "/api/plans", plan, token=alice_token)
    response = api("POST", "/api/plans/p/claim", {"agent": "x" * 101}, token=alice_token)
    assert_error(response, 400, "invalid")
    assert count() == 1


def test_a_plan_event_takes_no_agent(api, alice_token):
    plan = {"id": "p", "title": "P", "nodes": [{"key": "a", "title": "A"}], "agent": CODEX}
    assert_error(api("POST", "/api/plans", plan, token=alice_token), 400, "invalid")
    assert count() == 0


def test_the_log_keeps_the_agent_after_the_actor_and_reads_it_back(api, alice_token):
    start(api, alice_token, agent=CODEX)
    log = api("GET", "/api/sessions/s1/events.jsonl", token=alice_token).body.decode()
    assert log.startswith('{"session":"s1","seq":1,"type":"session_start","timestamp":')
    assert '"actor":"alice","agent":"codex 0.169.0","title":"Ship"' in log
    _, (event,) = jsonl.decode_log("s1.jsonl", log.encode())
    assert event.agent == CODEX
