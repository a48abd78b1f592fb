"""A start that names no id, retried under the same Idempotency-Key, answers with what
it made instead of making another (docs/rules.md, "Appending"): sessions, plans, node starts,
MCP's start_session, and racing retries over real HTTP."""

from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

import pytest

from sessions.domain.vocabulary import PLAN_CREATE, START
from sessions.models import Event
from tests.support.http import http_request
from tests.support.plans import RELEASE, post

KEY = {"HTTP_IDEMPOTENCY_KEY": "retry-after-timeout"}


@pytest.mark.django_db
def test_a_retried_session_start_without_an_id_answers_with_the_first_session(client, auth):
    first = post(client, "/api/sessions", {"title": "Fix the login"}, **KEY, **auth)
    again = post(client, "/api/sessions", {"title": "Fix the login"}, **KEY, **auth)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert Event.objects.filter(type=START).count() == 1


@pytest.mark.django_db
def test_starts_without_an_id_under_different_keys_are_different_sessions(client, auth):
    one = post(client, "/api/sessions", {"title": "a"}, HTTP_IDEMPOTENCY_KEY="k1", **auth)
    two = post(client, "/api/sessions", {"title": "a"}, HTTP_IDEMPOTENCY_KEY="k2", **auth)
    assert one.json()["id"] != two.json()["id"]
    assert Event.objects.filter(type=START).count() == 2


@pytest.mark.django_db
def test_another_actor_s_key_never_finds_a_start(client, auth, bob, token_for):
    post(client, "/api/sessions", {"title": "alice's"}, **KEY, **auth)
    bobs = post(
        client,
        "/api/sessions",
        {"title": "bob's"},
        **KEY,
        HTTP_AUTHORIZATION=f"Bearer {token_for(bob)}",
    )
    assert bobs.status_code == 201
    assert bobs.json()["owner"] == "bob"


@pytest.mark.django_db
def test_a_retried_plan_create_without_an_id_answers_with_the_first_plan(client, auth):
    body = {"title": "Release", "nodes": RELEASE}
    first = post(client, "/api/plans", body, **KEY, **auth)
    again = post(client, "/api/plans", body, **KEY, **auth)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert Event.objects.filter(type=PLAN_CREATE).count() == 1


@pytest.mark.django_db
def test_a_retried_node_start_without_an_id_answers_with_its_own_session(
    client,
    auth,
    plan,
):
    body = {"plan": "rel", "node": "schema"}
    first = post(client, "/api/sessions", body, **KEY, **auth)
    again = post(client, "/api/sessions", body, **KEY, **auth)
    assert (first.status_code, again.status_code) == (201, 200), again.content
    assert again.json()["id"] == first.json()["id"]
    assert Event.objects.filter(type=START, node="schema").count() == 1


@pytest.mark.django_db(transaction=True)
def test_racing_retries_of_one_id_less_start_make_one_session(live_server, alice, token_for):
    alice_token, racers = token_for(alice), 8
    barrier = Barrier(racers)

    def start(_):
        barrier.wait()
        return http_request(
            live_server.url,
            "POST",
            "/api/sessions",
            {"title": "once"},
            token=alice_token,
            headers={"Idempotency-Key": "race"},
        )

    with ThreadPoolExecutor(racers) as pool:
        answers = list(pool.map(start, range(racers)))
    assert sorted(a.status for a in answers) == [200] * (racers - 1) + [201]
    assert len({a.json()["id"] for a in answers}) == 1
    assert Event.objects.filter(type=START).count() == 1
