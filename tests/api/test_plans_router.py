"""Build plans through the API: the rules (docs/rules.md) for plans, node starts, claims and
outcomes, each as one behaviour; racing claims and starts over real HTTP."""

import pytest

from sessions.domain.vocabulary import CLOSE, PLAN_CREATE, START
from sessions.models import Event
from sessions.rules.append import append_event
from tests.support.plans import RELEASE, post, race


def start_node(client, auth, node, plan_id="rel", **extra):
    return post(client, "/api/sessions", {"plan": plan_id, "node": node, **extra}, **auth)


def close(client, auth, session_id, outcome=None):
    body = {"type": "session_close", **({"outcome": outcome} if outcome else {})}
    answer = post(client, f"/api/sessions/{session_id}/events", body, **auth)
    assert answer.status_code == 201, answer.content
    return answer.json()


def plan_now(client, auth, plan_id="rel"):
    return client.get(f"/api/plans/{plan_id}", **auth).json()


def states(view):
    return {node["key"]: node["state"] for node in view["nodes"]}


# Creating and amending


@pytest.mark.django_db
def test_a_new_plan_answers_its_view_with_the_unlocking_node_ready_first(plan):
    assert plan["status"] == "open"
    assert plan["owner"] == "alice"
    assert plan["ready"] == ["schema", "docs"]
    assert plan["critical_path"] == ["schema", "api", "ui"]
    assert plan["progress"] == {"done": 0, "total": 4}
    assert plan["counts"] == {"ready": 2, "waiting": 2}


@pytest.mark.django_db
def test_a_plan_with_a_cycle_is_refused_naming_the_cycle(client, auth):
    nodes = [{"key": "a", "title": "A", "needs": ["b"]}, {"key": "b", "title": "B", "needs": ["a"]}]
    answer = post(client, "/api/plans", {"id": "loop", "title": "Loop", "nodes": nodes}, **auth)
    assert answer.status_code == 400
    assert "a → b → a" in answer.json()["detail"]
    assert not Event.objects.filter(session="loop").exists()


@pytest.mark.django_db
def test_a_need_of_no_node_is_refused_naming_it(client, auth):
    nodes = [{"key": "a", "title": "A", "needs": ["zz"]}]
    answer = post(client, "/api/plans", {"title": "T", "nodes": nodes}, **auth)
    assert answer.status_code == 400
    assert "'zz'" in answer.json()["fields"]["nodes"]


@pytest.mark.django_db
def test_a_repeated_key_is_refused(client, auth):
    nodes = [{"key": "a", "title": "A"}, {"key": "a", "title": "again"}]
    answer = post(client, "/api/plans", {"title": "T", "nodes": nodes}, **auth)
    assert answer.status_code == 400
    assert "given twice" in answer.json()["detail"]


@pytest.mark.django_db
def test_a_node_may_not_need_a_key_twice(client, auth):
    nodes = [{"key": "a", "title": "A"}, {"key": "b", "title": "B", "needs": ["a", "a"]}]
    answer = post(client, "/api/plans", {"title": "T", "nodes": nodes}, **auth)
    assert answer.status_code == 400
    assert "must not repeat keys" in answer.json()["fields"]["nodes"]


@pytest.mark.django_db
def test_an_amend_may_not_retire_a_key_twice(client, auth, plan):
    body = {"type": "plan_amend", "retire": ["docs", "docs"]}
    answer = post(client, "/api/plans/rel/events", body, **auth)
    assert answer.status_code == 400
    assert "must not repeat keys" in answer.json()["fields"]["retire"]


@pytest.mark.django_db
def test_an_amend_that_closes_a_cycle_is_refused_and_writes_nothing(client, auth, plan):
    body = {"type": "plan_amend", "needs": [{"node": "schema", "needs": "ui"}]}
    answer = post(client, "/api/plans/rel/events", body, **auth)
    assert answer.status_code == 400
    assert "schema → ui → api → schema" in answer.json()["detail"]
    assert Event.objects.filter(session="rel").count() == 1


@pytest.mark.django_db
def test_an_amend_applies_in_order_and_answers_the_event_and_the_plan(client, auth, plan):
    body = {
        "type": "plan_amend",
        "nodes": [{"key": "api2", "title": "API, again", "needs": ["schema"]}],
        "drop_needs": [{"node": "ui", "needs": "api"}],
        "needs": [{"node": "ui", "needs": "api2"}],
        "retire": ["api"],
    }
    answer = post(client, "/api/plans/rel/events", body, **auth)
    assert answer.status_code == 201, answer.content
    event, view = answer.json()["event"], answer.json()["plan"]
    assert (event["plan"], event["seq"], event["type"]) == ("rel", 2, "plan_amend")
    assert states(view)["api"] == "retired"
    assert view["nodes"][2]["needs"] == ["api2"]
    assert view["critical_path"] == ["schema", "api2", "ui"]


@pytest.mark.django_db
def test_retiring_a_node_still_needed_is_refused(client, auth, plan):
    answer = post(
        client, "/api/plans/rel/events", {"type": "plan_amend", "retire": ["api"]}, **auth
    )
    assert answer.status_code == 400
    assert "'ui' still needs it" in answer.json()["detail"]


@pytest.mark.django_db
def test_retiring_a_node_with_a_live_session_is_a_conflict(client, auth, plan):
    start_node(client, auth, "docs")
    answer = post(
        client, "/api/plans/rel/events", {"type": "plan_amend", "retire": ["docs"]}, **auth
    )
    assert answer.status_code == 409
    assert answer.json()["error"] == "node_running"
    assert answer.json()["plan"]["seq"] == 1


@pytest.mark.django_db
def test_a_retired_key_is_never_used_again(client, auth, plan):
    post(client, "/api/plans/rel/events", {"type": "plan_amend", "retire": ["docs"]}, **auth)
    again = {"type": "plan_amend", "nodes": [{"key": "docs", "title": "Docs again"}]}
    answer = post(client, "/api/plans/rel/events", again, **auth)
    assert answer.status_code == 400
    assert "never reused" in answer.json()["detail"]


@pytest.mark.django_db
def test_only_the_owner_or_a_lead_may_amend(client, plan, bob, lead, token_for):
    body = {"type": "plan_amend", "note": "more", "nodes": [{"key": "n", "title": "N"}]}
    as_bob = {"HTTP_AUTHORIZATION": f"Bearer {token_for(bob)}"}
    assert post(client, "/api/plans/rel/events", body, **as_bob).status_code == 403
    as_lead = {"HTTP_AUTHORIZATION": f"Bearer {token_for(lead)}"}
    assert post(client, "/api/plans/rel/events", body, **as_lead).status_code == 201


@pytest.mark.django_db
def test_an_amend_with_a_stale_expected_seq_is_a_conflict(client, auth, plan):
    body = {"type": "plan_amend", "nodes": [{"key": "n", "title": "N"}], "expected_seq": 0}
    answer = post(client, "/api/plans/rel/events", body, **auth)
    assert answer.status_code == 409
    assert answer.json()["error"] == "stale_expected_seq"


@pytest.mark.django_db
def test_a_repeated_idempotency_key_amends_once(client, auth, plan):
    body = {"type": "plan_amend", "nodes": [{"key": "n", "title": "N"}]}
    first = post(client, "/api/plans/rel/events", body, HTTP_IDEMPOTENCY_KEY="k1", **auth)
    again = post(client, "/api/plans/rel/events", body, HTTP_IDEMPOTENCY_KEY="k1", **auth)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["event"] == first.json()["event"]
    assert Event.objects.filter(session="rel").count() == 2


@pytest.mark.django_db
def test_an_amend_must_change_something(client, auth, plan):
    answer = post(client, "/api/plans/rel/events", {"type": "plan_amend", "note": "hi"}, **auth)
    assert answer.status_code == 400


@pytest.mark.django_db
def test_plan_and_session_ids_share_one_namespace(client, auth, plan):
    answer = post(client, "/api/sessions", {"id": "rel", "title": "Clash"}, **auth)
    assert answer.status_code == 409
    assert client.get("/api/sessions/rel", **auth).status_code == 404
    assert client.get("/api/plans/nope", **auth).status_code == 404


# Working on nodes


@pytest.mark.django_db
def test_starting_a_node_takes_its_title_and_runs_it(client, auth, plan):
    answer = start_node(client, auth, "schema")
    assert answer.status_code == 201
    session = answer.json()
    assert (session["title"], session["plan"], session["node"]) == (
        "Design the schema",
        "rel",
        "schema",
    )
    view = plan_now(client, auth)
    assert states(view)["schema"] == "running"
    assert view["nodes"][0]["session"] == session["id"]
    assert view["ready"] == ["docs"]


@pytest.mark.django_db
def test_a_node_waiting_on_others_refuses_to_start_saying_which(client, auth, plan):
    answer = start_node(client, auth, "api")
    assert answer.status_code == 409
    assert answer.json()["error"] == "node_not_ready"
    assert "needs 'schema' done first" in answer.json()["detail"]


@pytest.mark.django_db
def test_a_running_node_refuses_a_second_session(client, auth, plan):
    first = start_node(client, auth, "schema").json()["id"]
    answer = start_node(client, auth, "schema")
    assert answer.status_code == 409
    assert first in answer.json()["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"plan": "nowhere", "node": "a"}, "plan"),
        ({"plan": "rel", "node": "nope"}, "node"),
        ({"plan": "rel"}, "node"),
        ({"node": "schema", "title": "T"}, "plan"),
    ],
)
def test_a_start_naming_no_such_plan_or_node_is_invalid_input(client, auth, plan, body, field):
    answer = post(client, "/api/sessions", body, **auth)
    assert answer.status_code == 400
    assert field in answer.json()["fields"]


@pytest.mark.django_db
def test_a_done_node_unlocks_what_needs_it(client, auth, plan):
    close(client, auth, start_node(client, auth, "schema").json()["id"])
    view = plan_now(client, auth)
    assert states(view)["schema"] == "done"
    assert view["ready"] == ["api", "docs"]
    assert view["progress"] == {"done": 1, "total": 4}


@pytest.mark.django_db
def test_a_failed_node_fails_its_dependents_upstream_and_is_never_ready(client, auth, plan):
    answer = close(client, auth, start_node(client, auth, "schema").json()["id"], "failed")
    assert answer["session"]["outcome"] == "failed"
    view = plan_now(client, auth)
    assert states(view) == {
        "schema": "failed",
        "api": "upstream_failed",
        "ui": "upstream_failed",
        "docs": "ready",
    }
    assert view["ready"] == ["docs"]


@pytest.mark.django_db
def test_a_failed_node_can_be_retried_by_name(client, auth, plan):
    close(client, auth, start_node(client, auth, "schema").json()["id"], "abandoned")
    assert start_node(client, auth, "schema").status_code == 201
    assert states(plan_now(client, auth))["schema"] == "running"


@pytest.mark.django_db
def test_every_node_done_makes_the_plan_done(client, auth, plan):
    for key in ("schema", "api", "ui", "docs"):
        close(client, auth, start_node(client, auth, key).json()["id"])
    view = plan_now(client, auth)
    assert (view["status"], view["critical_path"], view["ready"]) == ("done", [], [])


@pytest.mark.django_db
def test_a_done_plan_can_be_amended_again(client, auth, plan):
    for key in ("schema", "api", "ui", "docs"):
        close(client, auth, start_node(client, auth, key).json()["id"])
    body = {"type": "plan_amend", "nodes": [{"key": "v2", "title": "Next", "needs": ["ui"]}]}
    answer = post(client, "/api/plans/rel/events", body, **auth)
    assert answer.status_code == 201
    assert (answer.json()["plan"]["status"], answer.json()["plan"]["ready"]) == ("open", ["v2"])


@pytest.mark.django_db
def test_import_takes_a_session_on_a_node_that_was_not_ready_as_it_happened(plan, tmp_path):
    from tests.support.logs import import_logs

    (tmp_path / "late.jsonl").write_text(
        '{"type":"session_start","timestamp":"2026-11-28T08:00:00Z","actor":"x",'
        '"title":"UI first","plan":"rel","node":"ui"}\n'
    )
    assert import_logs(tmp_path) == (None, "")
    assert Event.objects.filter(session="late", node="ui").exists()


@pytest.mark.django_db
def test_a_plan_with_every_node_retired_is_cancelled(client, auth, plan):
    body = {"type": "plan_amend", "retire": ["ui", "api", "schema", "docs"]}
    assert post(client, "/api/plans/rel/events", body, **auth).status_code == 201
    assert plan_now(client, auth)["status"] == "cancelled"


@pytest.mark.django_db
def test_anyone_may_start_a_node_of_any_plan_and_the_session_is_theirs(
    client, plan, bob, token_for
):
    as_bob = {"HTTP_AUTHORIZATION": f"Bearer {token_for(bob)}"}
    answer = start_node(client, as_bob, "docs")
    assert answer.status_code == 201
    assert answer.json()["owner"] == "bob"


# Claiming


@pytest.mark.django_db
def test_a_claim_starts_the_first_ready_node(client, auth, plan):
    answer = post(client, "/api/plans/rel/claim", {}, **auth)
    assert answer.status_code == 201
    assert (answer.json()["node"], answer.json()["owner"]) == ("schema", "alice")


@pytest.mark.django_db
def test_a_claim_with_nothing_ready_is_refused(client, auth, plan):
    post(client, "/api/plans/rel/claim", {}, **auth)
    post(client, "/api/plans/rel/claim", {}, **auth)
    answer = post(client, "/api/plans/rel/claim", {}, **auth)
    assert answer.status_code == 409
    assert answer.json()["error"] == "nothing_ready"


@pytest.mark.django_db
def test_a_repeated_claim_key_returns_the_first_claim(client, auth, plan):
    first = post(client, "/api/plans/rel/claim", {}, HTTP_IDEMPOTENCY_KEY="c1", **auth)
    again = post(client, "/api/plans/rel/claim", {}, HTTP_IDEMPOTENCY_KEY="c1", **auth)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert Event.objects.filter(type=START).count() == 1


@pytest.mark.django_db
def test_a_claim_refuses_a_key_it_could_not_store(alice, plan):
    from sessions.rules.claims import claim_next
    from sessions.rules.refusals import InvalidEvent

    with pytest.raises(InvalidEvent) as refused:
        claim_next("rel", user=alice, idempotency_key="k" * 256)
    assert "idempotency_key" in refused.value.errors
    assert not Event.objects.filter(type=START).exists()


@pytest.mark.django_db
def test_a_claim_on_no_such_plan_is_not_found(client, auth):
    assert post(client, "/api/plans/nope/claim", {}, **auth).status_code == 404


@pytest.mark.django_db
def test_a_claim_takes_an_empty_object_only(client, auth, plan):
    assert post(client, "/api/plans/rel/claim", {"node": "ui"}, **auth).status_code == 400


@pytest.mark.django_db
def test_the_demo_plan_shows_every_kind_of_node(client, auth):
    from tests.support.logs import DEMO, import_logs

    assert import_logs(DEMO) == (None, "")
    view = plan_now(client, auth, "payments-v2")
    assert len(view["nodes"]) >= 12
    assert {"done", "running", "failed", "upstream_failed", "ready", "waiting"} <= set(
        view["counts"]
    )
    running = [n["session"] for n in view["nodes"] if n["state"] == "running"]
    assert client.get(f"/api/sessions/{running[0]}", **auth).json()["status"] == "blocked"


# Races, over real HTTP against gunicorn (two workers, four threads each)

AGENTS = 12


@pytest.mark.django_db(transaction=True)
def test_racing_claims_get_different_nodes_or_nothing_ready(gunicorn, alice, token_for):
    nodes = [{"key": f"n{i}", "title": f"Node {i}"} for i in range(8)]
    append_event("wide", PLAN_CREATE, {"title": "Wide", "nodes": nodes}, user=alice)
    answers = race(gunicorn.url, token_for(alice), [("POST", "/api/plans/wide/claim", {})] * AGENTS)
    claimed = [a.json()["node"] for a in answers if a.status == 201]
    refused = [a.json()["error"] for a in answers if a.status != 201]
    assert sorted(claimed) == sorted(node["key"] for node in nodes)
    assert refused == ["nothing_ready"] * (AGENTS - len(nodes))
    assert Event.objects.filter(type=START, plan="wide").count() == len(nodes)


@pytest.mark.django_db(transaction=True)
def test_racing_starts_of_one_node_have_exactly_one_winner(gunicorn, alice, token_for):
    append_event("one", PLAN_CREATE, {"title": "One", "nodes": RELEASE}, user=alice)
    body = {"plan": "one", "node": "schema"}
    answers = race(gunicorn.url, token_for(alice), [("POST", "/api/sessions", body)] * AGENTS)
    assert sorted(a.status for a in answers) == [201] + [409] * (AGENTS - 1)
    assert Event.objects.filter(type=START, plan="one", node="schema").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_close_racing_a_claim_never_lets_a_node_start_twice(gunicorn, alice, token_for):
    append_event("two", PLAN_CREATE, {"title": "Two", "nodes": RELEASE[:2]}, user=alice)
    append_event("s-schema", START, {"plan": "two", "node": "schema"}, user=alice)
    token = token_for(alice)
    answers = race(
        gunicorn.url,
        token,
        [("POST", "/api/sessions/s-schema/events", {"type": "session_close"})]
        + [("POST", "/api/plans/two/claim", {})] * 4,
    )
    assert answers[0].status == 201
    starts = Event.objects.filter(type=START, plan="two")
    assert sorted(starts.values_list("node", flat=True)) in (["schema"], ["api", "schema"])
    assert Event.objects.filter(type=CLOSE).count() == 1


# Pages


@pytest.mark.django_db
def test_the_plan_page_escapes_every_text_in_its_drawing(client, alice, auth):
    title = '<script>alert("x")</script> & more'
    nodes = [{"key": "a", "title": title}, {"key": "b", "title": "B", "needs": ["a"]}]
    post(client, "/api/plans", {"id": "esc", "title": title, "nodes": nodes}, **auth)
    append_event("s-a", START, {"plan": "esc", "node": "a"}, user=alice)
    append_event("s-a", "session_block", {"reason": "<img src=x onerror=alert(1)>"}, user=alice)
    client.force_login(alice)
    page = client.get("/plans/esc/").content.decode()
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;" in page and "&lt;img src=x" in page
    assert '<a href="/sessions/s-a/">' in page
