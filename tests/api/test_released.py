"""A worker hands its node back unfinished: `outcome: "released"` (docs/rules.md,
"Vocabulary", what a stopping dispatcher writes). The node is ready again at once, with its
handoff, where `abandoned` fails it."""

import pytest

from sessions.domain.vocabulary import OUTCOMES, RELEASED
from tests.support.plans import post

pytestmark = pytest.mark.django_db


def start_and_close(client, auth, node, session, **close):
    started = post(client, "/api/sessions", {"plan": "rel", "node": node, "id": session}, **auth)
    assert started.status_code == 201, started.content
    body = {"type": "session_close", **close}
    closed = post(client, f"/api/sessions/{session}/events", body, **auth)
    assert closed.status_code == 201, closed.content


def node_of(client, auth, key):
    view = client.get("/api/plans/rel", **auth).json()
    return next(node for node in view["nodes"] if node["key"] == key), view


def test_a_released_node_is_ready_again_with_its_handoff(client, auth, plan):
    start_and_close(client, auth, "schema", "s1", outcome=RELEASED, note="dispatcher stopped")
    node, view = node_of(client, auth, "schema")
    assert node["state"] == "ready" and "schema" in view["ready"]
    assert node["last_attempt"]["outcome"] == RELEASED
    assert node["last_attempt"]["session"] == "s1"


def test_a_released_node_is_claimed_again(client, auth, plan):
    start_and_close(client, auth, "schema", "s1", outcome=RELEASED)
    claimed = post(client, "/api/plans/rel/claim", {}, **auth)
    assert claimed.status_code == 201
    assert claimed.json()["node"] == "schema"
    assert claimed.json()["last_attempt"]["session"] == "s1"


def test_an_abandoned_node_fails_where_a_released_one_does_not(client, auth, plan):
    start_and_close(client, auth, "schema", "s1", outcome="abandoned")
    node, _ = node_of(client, auth, "schema")
    assert node["state"] == "failed"


def test_released_is_an_outcome_ct_offers():
    from ct import main

    assert set(main.OUTCOMES) == set(OUTCOMES) - {"lapsed"}  # lapsed: reclaims' only
