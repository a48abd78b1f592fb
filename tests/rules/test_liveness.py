"""Liveness (docs/rules.md, "Liveness" and "Messages"): heartbeats and messages leave the
status alone; a node's session silent past its plan's lease lapses, derived at `now`;
a claim or a start by name reclaims it in one transaction, closing the silent session
(whose worker is then fenced off); a release hands it back; attempts are capped; the
handoff reaches the next worker. Each behaviour once, through the API where it shows."""

import io
import json
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from threading import Barrier

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from sessions.domain import vocabulary
from sessions.domain.vocabulary import MESSAGE, PLAN_AMEND, PLAN_CREATE, PROGRESS, START, WORK
from sessions.models import Event
from sessions.readmodels import plan_graphs, plan_sessions
from sessions.rules.append import append_event
from sessions.rules.claims import claim_next
from tests.support.http import http_request
from tests.support.logs import DEMO, DEMO_WRITTEN_AS_OF, import_demo_moved_to_now

pytestmark = pytest.mark.django_db

LONG_AGO = timedelta(hours=2)  # past any lease these tests give (30 minutes)
NODES = [
    {"key": "a", "title": "Migrate the schema"},
    {"key": "b", "title": "Backfill", "needs": ["a"]},
    {"key": "c", "title": "Docs"},
]


def post(client, path, body, token, **headers):
    return client.post(
        path, body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}", **headers
    )


def get(client, path, token):
    return client.get(path, HTTP_AUTHORIZATION=f"Bearer {token}")


@pytest.fixture
def plan(alice):
    """Alice's plan, lease 30 minutes, at most 2 attempts per node."""
    fields = {"title": "Release", "nodes": NODES, "lease": 30, "max_attempts": 2}
    append_event("rel", PLAN_CREATE, fields, user=alice, now=timezone.now() - LONG_AGO * 2)


@pytest.fixture
def silent(plan, bob):
    """Bob's session on node a, silent for two hours: lapsed."""
    then = timezone.now() - LONG_AGO
    append_event("bob-a", START, {"plan": "rel", "node": "a"}, user=bob, now=then)
    append_event("bob-a", PROGRESS, {"note": "half the tables moved"}, user=bob, now=then)
    return "bob-a"


def node(client, token, key, plan_id="rel"):
    view = get(client, f"/api/plans/{plan_id}", token).json()
    return next(n for n in view["nodes"] if n["key"] == key)


# Heartbeats and messages --------------------------------------------------------------


def test_a_heartbeat_keeps_the_status_blockers_and_next_action(client, alice, token_for):
    token = token_for(alice)
    post(client, "/api/sessions", {"id": "s", "title": "T", "note": "first"}, token)
    post(client, "/api/sessions/s/events", {"type": "session_block", "reason": "keys"}, token)
    answer = post(client, "/api/sessions/s/events", {"type": PROGRESS, "note": "reading"}, token)
    assert answer.status_code == 201
    view = answer.json()["session"]
    assert (view["status"], view["next_action"], view["blocker_count"]) == ("blocked", "keys", 1)
    assert view["progress"]["note"] == "reading"


def test_a_message_does_not_make_a_silent_session_look_alive(client, alice, token_for):
    append_event("quiet", START, {"title": "T"}, user=alice, now=timezone.now() - LONG_AGO)
    token = token_for(alice)
    answer = post(client, "/api/sessions/quiet/events", {"type": MESSAGE, "note": "hello?"}, token)
    view = answer.json()["session"]
    assert view["stale"] is True
    assert view["attention"]["kind"] == "stale"
    assert (view["message_count"], view["messages"][0]["note"]) == (1, "hello?")


def test_a_message_needs_its_note(client, alice, token_for):
    token = token_for(alice)
    post(client, "/api/sessions", {"id": "s", "title": "T"}, token)
    answer = post(client, "/api/sessions/s/events", {"type": MESSAGE}, token)
    assert answer.status_code == 400
    assert not Event.objects.filter(type=MESSAGE).exists()


def test_the_plan_owner_may_message_a_session_on_the_plans_node(client, alice, silent, token_for):
    answer = post(
        client,
        f"/api/sessions/{silent}/events",
        {"type": MESSAGE, "note": "stop"},
        token_for(alice),
    )
    assert answer.status_code == 201


def test_nobody_else_may_message_someone_elses_session(client, make_user, silent, token_for):
    carol = make_user("carol")
    answer = post(
        client, f"/api/sessions/{silent}/events", {"type": MESSAGE, "note": "hi"}, token_for(carol)
    )
    assert answer.status_code == 403
    assert "plan's owner" in answer.json()["detail"]


def test_the_plan_owner_may_not_otherwise_act_on_the_session(client, alice, silent, token_for):
    body = {"type": "session_block", "reason": "mine now"}
    assert post(client, f"/api/sessions/{silent}/events", body, token_for(alice)).status_code == 403


def test_a_heartbeat_with_expected_seq_acknowledges_the_messages_it_saw(client, alice, token_for):
    token = token_for(alice)
    post(client, "/api/sessions", {"id": "s", "title": "T"}, token)
    post(client, "/api/sessions/s/events", {"type": MESSAGE, "note": "one"}, token)
    seen = get(client, "/api/sessions/s", token).json()
    assert seen["message_count"] == 1
    post(client, "/api/sessions/s/events", {"type": MESSAGE, "note": "two"}, token)
    late = {"type": PROGRESS, "note": "read: one", "expected_seq": seen["seq"]}
    refused = post(client, "/api/sessions/s/events", late, token)
    assert refused.status_code == 409
    assert refused.json()["error"] == "stale_expected_seq"
    again = get(client, "/api/sessions/s", token).json()
    ack = {"type": PROGRESS, "note": "read both", "expected_seq": again["seq"]}
    view = post(client, "/api/sessions/s/events", ack, token).json()["session"]
    assert (view["message_count"], view["messages"]) == (0, [])


def test_nothing_may_be_sent_to_a_closed_session(client, alice, token_for):
    token = token_for(alice)
    post(client, "/api/sessions", {"id": "s", "title": "T"}, token)
    post(client, "/api/sessions/s/events", {"type": "session_close"}, token)
    for kind in (PROGRESS, MESSAGE):
        answer = post(client, "/api/sessions/s/events", {"type": kind, "note": "x"}, token)
        assert answer.json()["error"] == "transition_not_allowed"


# Leases --------------------------------------------------------------------------------


def test_a_new_plan_gets_the_settings_lease_and_cap_written_in(client, alice, token_for, settings):
    settings.LEASE_MINUTES, settings.MAX_ATTEMPTS = 17, 4
    body = {"id": "p", "title": "P", "nodes": NODES}
    view = post(client, "/api/plans", body, token_for(alice)).json()
    assert (view["lease"], view["max_attempts"]) == (17, 4)
    create = Event.objects.get(session="p")
    assert (create.lease, create.max_attempts) == (17, 4)


def test_a_plan_names_its_own_lease_and_cap(client, alice, token_for):
    body = {"id": "p", "title": "P", "nodes": NODES, "lease": 5, "max_attempts": 1}
    view = post(client, "/api/plans", body, token_for(alice)).json()
    assert (view["lease"], view["max_attempts"]) == (5, 1)


@pytest.mark.parametrize(
    "change", [{"lease": 0}, {"lease": None}, {"max_attempts": 101}, {"lease": True}]
)
def test_an_amend_may_change_the_lease_but_not_remove_it(client, alice, plan, token_for, change):
    answer = post(client, "/api/plans/rel/events", {"type": PLAN_AMEND, **change}, token_for(alice))
    assert answer.status_code == 400
    assert Event.objects.filter(session="rel").count() == 1


def test_an_amended_lease_applies_to_the_silence_as_it_stands(client, alice, silent, token_for):
    token = token_for(alice)
    assert node(client, token, "a")["state"] == "lapsed"
    post(client, "/api/plans/rel/events", {"type": PLAN_AMEND, "lease": 600}, token)
    assert node(client, token, "a")["state"] == "running"


def test_a_silent_node_session_lapses(client, alice, silent, token_for):
    token = token_for(alice)
    view = get(client, "/api/plans/rel", token).json()
    assert view["lapsed"] == ["a"]
    assert node(client, token, "a") | {"title": None} == {
        "key": "a",
        "title": None,
        "needs": [],
        "state": "lapsed",
        "session": silent,
        "attempts": 1,
        "last_attempt": None,
        "usage": None,
        "paths": [],
        "budget_usd": None,
        "overlaps": [],
        "brief": None,
    }
    attention = get(client, f"/api/sessions/{silent}", token).json()["attention"]
    assert attention["kind"] == "lapsed"


def test_a_blocked_node_session_never_lapses(client, bob, silent, alice, token_for):
    append_event(silent, "session_block", {"reason": "waits on legal"}, user=bob)
    assert node(client, token_for(alice), "a")["state"] == "running"


def test_a_kept_plans_node_lapses_with_no_new_event_and_recovers_on_a_heartbeat(bob, silent):
    graph = plan_graphs.graph("rel")
    now = timezone.now()
    with plan_sessions_held():
        assert plan_sessions.node_states("rel", graph, now - LONG_AGO).states["a"][0] == "running"
    with plan_sessions_held():
        assert plan_sessions.node_states("rel", graph, now).states["a"][0] == "lapsed"
    append_event(silent, PROGRESS, {}, user=bob)
    with plan_sessions_held():
        assert plan_sessions.node_states("rel", graph, timezone.now()).states["a"][0] == "running"


def plan_sessions_held():
    from sessions import store

    return store.holding("rel")


# Reclaims, fencing, releases ------------------------------------------------------------


def test_a_claim_reclaims_a_lapsed_node_closing_the_silent_session(
    client, silent, make_user, token_for
):
    carol = make_user("carol")
    answer = post(client, "/api/plans/rel/claim", {}, token_for(carol))
    assert answer.status_code == 201
    claimed = answer.json()
    assert claimed["node"] == "a"
    close = Event.objects.get(session=silent, type="session_close")
    assert (close.outcome, close.actor) == ("lapsed", "carol")
    assert close.note.startswith("no activity since ")
    assert close.note.endswith(f"; node reclaimed by session {claimed['id']}")
    assert claimed["last_attempt"] == {
        "session": silent,
        "outcome": "lapsed",
        "note": close.note,
        "progress": "half the tables moved",
        "work": None,
        "messages": [],
    }


def test_a_reclaim_hands_the_silent_workers_unread_messages_to_the_next_worker(
    client, alice, silent, make_user, token_for
):
    append_event(silent, MESSAGE, {"note": "use the staging keys"}, user=alice)
    claimed = post(client, "/api/plans/rel/claim", {}, token_for(make_user("carol"))).json()
    [message] = claimed["last_attempt"]["messages"]
    assert (message["note"], message["actor"]) == ("use the staging keys", "alice")


HEAD = "9" * 40


def test_a_reclaim_hands_the_silent_workers_branch_and_pull_request_to_the_next_worker(
    client, bob, silent, make_user, token_for
):
    fields = {"repo": "acme/shop", "branch": "move-tables", "commit": HEAD, "pr": 12}
    append_event(silent, WORK, fields, user=bob, now=timezone.now() - LONG_AGO)
    claimed = post(client, "/api/plans/rel/claim", {}, token_for(make_user("carol"))).json()
    work = claimed["last_attempt"]["work"]
    assert (work["branch"], work["commit"], work["pr"]["number"]) == ("move-tables", HEAD, 12)


def test_a_nodes_last_attempt_carries_its_work_as_it_is_now(client, alice, bob, silent, token_for):
    append_event(silent, WORK, {"repo": "acme/shop", "branch": "move-tables"}, user=bob)
    append_event(silent, "session_close", {"outcome": "failed"}, user=bob)
    assert node(client, token_for(alice), "a")["last_attempt"]["work"]["pr"] is None
    append_event(silent, WORK, {"pr": 12, "pr_state": "open"}, user=bob)  # after the close
    work = node(client, token_for(alice), "a")["last_attempt"]["work"]
    assert (work["branch"], work["pr"]["state"]) == ("move-tables", "open")


def test_a_closed_attempts_unread_messages_are_in_the_nodes_last_attempt(
    client, alice, bob, silent, token_for
):
    append_event(silent, MESSAGE, {"note": "read before you go on"}, user=alice)
    append_event(silent, MESSAGE, {"note": "and the runbook"}, user=alice)
    append_event(silent, "session_close", {"outcome": "failed"}, user=bob)
    last = node(client, token_for(alice), "a")["last_attempt"]
    assert [m["note"] for m in last["messages"]] == ["read before you go on", "and the runbook"]


def test_messages_a_worker_acknowledged_are_not_handed_on(client, alice, bob, silent, token_for):
    append_event(silent, MESSAGE, {"note": "seen"}, user=alice)
    append_event(silent, PROGRESS, {"note": "read it"}, user=bob)
    append_event(silent, "session_close", {"outcome": "failed"}, user=bob)
    assert node(client, token_for(alice), "a")["last_attempt"]["messages"] == []


def test_a_claim_passes_over_a_lapsed_node_whose_stream_has_no_room_for_the_close(
    client, silent, make_user, token_for, monkeypatch
):
    # An older import filled bob-a's stream (start, progress) to the cap without a close.
    monkeypatch.setattr(vocabulary, "MAX_STREAM_EVENTS", 2)
    answer = post(client, "/api/plans/rel/claim", {}, token_for(make_user("carol")))
    assert answer.status_code == 201, answer.json()
    assert answer.json()["node"] == "c"
    assert not Event.objects.filter(session=silent, type="session_close").exists()


def test_the_reclaimed_worker_is_fenced_off_and_told_who_took_over(
    client, bob, silent, make_user, token_for
):
    carol = make_user("carol")
    taker = post(client, "/api/plans/rel/claim", {}, token_for(carol)).json()["id"]
    answer = post(client, f"/api/sessions/{silent}/events", {"type": PROGRESS}, token_for(bob))
    assert answer.status_code == 409
    assert answer.json()["error"] == "transition_not_allowed"
    assert taker in answer.json()["detail"]


def test_a_start_by_name_reclaims_a_lapsed_node(client, silent, make_user, token_for):
    carol = make_user("carol")
    body = {"id": "carol-a", "plan": "rel", "node": "a"}
    assert post(client, "/api/sessions", body, token_for(carol)).status_code == 201
    assert Event.objects.get(session=silent, type="session_close").outcome == "lapsed"


def test_past_the_cap_a_lapsed_node_needs_a_person(client, silent, make_user, token_for):
    carol = make_user("carol")
    # An hour ago bob's session had lapsed: carol reclaimed the node, and has been
    # silent since. Her attempt, the second, lapsed too; the cap is 2.
    then = timezone.now() - LONG_AGO / 2
    append_event("carol-a", START, {"plan": "rel", "node": "a"}, user=carol, now=then)
    token = token_for(carol)
    answer = post(client, "/api/sessions", {"plan": "rel", "node": "a"}, token)
    assert answer.status_code == 409
    assert answer.json()["error"] == "attempts_exhausted"
    assert "max_attempts 2" in answer.json()["detail"]
    assert post(client, "/api/plans/rel/claim", {}, token).json()["node"] == "c"


def test_a_lapsed_node_whose_needs_are_no_longer_done_is_not_reclaimed(
    client, alice, silent, make_user, token_for
):
    post(
        client,
        "/api/plans/rel/events",
        {"type": PLAN_AMEND, "needs": [{"node": "a", "needs": "c"}]},
        token_for(alice),
    )
    carol = make_user("carol")
    answer = post(client, "/api/sessions", {"plan": "rel", "node": "a"}, token_for(carol))
    assert answer.json()["error"] == "node_not_ready"
    assert post(client, "/api/plans/rel/claim", {}, token_for(carol)).json()["node"] == "c"


def test_the_plan_owner_releases_a_lapsed_node(client, alice, silent, token_for):
    token = token_for(alice)
    body = {"type": "session_close", "outcome": "lapsed", "note": "handing it back"}
    assert post(client, f"/api/sessions/{silent}/events", body, token).status_code == 201
    assert node(client, token, "a")["state"] == "ready"


def test_the_worker_may_not_close_its_own_session_as_lapsed(client, bob, silent, token_for):
    body = {"type": "session_close", "outcome": "lapsed"}
    answer = post(client, f"/api/sessions/{silent}/events", body, token_for(bob))
    assert answer.status_code == 400
    assert "reclaim" in answer.json()["detail"]


def test_a_live_session_may_not_be_released(client, alice, bob, plan, token_for):
    append_event("live", START, {"plan": "rel", "node": "a"}, user=bob)
    body = {"type": "session_close", "outcome": "lapsed"}
    answer = post(client, "/api/sessions/live/events", body, token_for(alice))
    assert answer.status_code == 400
    assert not Event.objects.filter(session="live", type="session_close").exists()


def test_a_heartbeat_before_the_reclaim_keeps_the_node(client, bob, silent, make_user, token_for):
    append_event(silent, PROGRESS, {"note": "back"}, user=bob)
    carol = make_user("carol")
    assert post(client, "/api/plans/rel/claim", {}, token_for(carol)).json()["node"] == "c"
    assert not Event.objects.filter(session=silent, type="session_close").exists()


@pytest.mark.django_db(transaction=True)
def test_racing_reclaimers_take_each_lapsed_node_once(gunicorn, alice, bob, make_user, token_for):
    from tests.support.plans import race

    keys = [f"n{i}" for i in range(6)]
    nodes = [{"key": key, "title": key} for key in keys]
    then = timezone.now() - LONG_AGO
    fields = {"title": "Wide", "nodes": nodes, "lease": 30, "max_attempts": 3}
    append_event("wide", PLAN_CREATE, fields, user=alice, now=then)
    for key in keys:
        append_event(f"old-{key}", START, {"plan": "wide", "node": key}, user=bob, now=then)
    carol = make_user("carol")
    answers = race(gunicorn.url, token_for(carol), [("POST", "/api/plans/wide/claim", {})] * 12)
    claimed = sorted(a.json()["node"] for a in answers if a.status == 201)
    assert claimed == keys
    assert sorted(a.json()["error"] for a in answers if a.status != 201) == ["nothing_ready"] * 6
    closes = Event.objects.filter(type="session_close", session__startswith="old-")
    assert sorted(closes.values_list("session", flat=True)) == [f"old-{key}" for key in keys]
    assert Event.objects.filter(type=START, plan="wide").count() == 12
    assert {c.outcome for c in closes} == {vocabulary.LAPSED}
    # After the reclaims, exactly one unclosed session holds each node.
    closed = set(Event.objects.filter(type="session_close").values_list("session", flat=True))
    holders = Event.objects.filter(type=START, plan="wide").exclude(session__in=closed)
    assert sorted(holders.values_list("node", flat=True)) == keys


@pytest.mark.django_db(transaction=True)
def test_a_heartbeat_racing_a_reclaim_either_keeps_the_node_or_is_fenced(
    gunicorn, alice, bob, make_user, token_for
):
    then = timezone.now() - LONG_AGO
    fields = {"title": "One", "nodes": NODES[:1], "lease": 30}
    append_event("one", PLAN_CREATE, fields, user=alice, now=then)
    append_event("old", START, {"plan": "one", "node": "a"}, user=bob, now=then)
    carol = make_user("carol")
    requests = [
        ("/api/sessions/old/events", {"type": PROGRESS}, token_for(bob)),
        ("/api/plans/one/claim", {}, token_for(carol)),
    ]
    barrier = Barrier(2)

    def send(request):
        path, body, token = request
        barrier.wait(timeout=30)
        return http_request(gunicorn.url, "POST", path, body, token=token)

    with ThreadPoolExecutor(2) as pool:
        beat, claim = pool.map(send, requests)
    closes = Event.objects.filter(session="old", type="session_close").count()
    # Exactly one wins: a heartbeat first keeps the node (nothing to claim), a reclaim
    # first closes the session and the heartbeat is fenced off.
    assert sorted([beat.status, claim.status]) == [201, 409]
    assert closes == (1 if claim.status == 201 else 0)


# The demo --------------------------------------------------------------------------------


def test_the_demo_moved_to_now_shows_a_lapsed_node_a_handoff_and_a_waiting_message(alice):
    from sessions.readmodels import plan_views, session_views

    import_demo_moved_to_now(verbosity=0)
    view = plan_views.plan_view("payments-v2")
    states = {n.key: n for n in view.nodes}
    assert view.lapsed == ["retries"]
    second = states["webhooks"]
    assert (second.state, second.attempts) == ("running", 2)
    assert second.last_attempt.outcome == "lapsed"
    assert second.last_attempt.progress == "signature check written; wiring the retry queue"
    reclaim = Event.objects.get(session="pay-webhooks-1", type="session_close")
    assert reclaim.note.startswith("no activity since ")
    assert (
        reclaim.note
        != "no activity since 2026-11-29T05:40:00.000000Z; node reclaimed by session pay-webhooks-2"
    )
    retries = session_views.session_view("pay-retries")
    assert retries.message_count == 1 and retries.attention.kind == "lapsed"
    assert timezone.now() - max(Event.objects.values_list("timestamp", flat=True)) < timedelta(
        minutes=30
    )


def test_the_list_of_sessions_needing_attention_holds_a_lapsed_one_not_yet_stale(
    client, alice, bob, token_for
):
    then = timezone.now() - timedelta(minutes=10)  # past a 5-minute lease, not yet stale
    fields = {"title": "Quick", "nodes": NODES[:1], "lease": 5}
    append_event("quick", PLAN_CREATE, fields, user=alice, now=then)
    append_event("quiet-node", START, {"plan": "quick", "node": "a"}, user=bob, now=then)
    append_event("quiet-plain", START, {"title": "no plan"}, user=bob, now=then)
    token = token_for(alice)
    listed = get(client, "/api/sessions?attention=true", token).json()["items"]
    assert [(s["id"], s["attention"]["kind"], s["stale"]) for s in listed] == [
        ("quiet-node", "lapsed", False)
    ]
    others = get(client, "/api/sessions?attention=false", token).json()["items"]
    assert [s["id"] for s in others] == ["quiet-plain"]


def test_loading_the_demo_again_leaves_it_as_it_was_and_says_so(alice):
    import_demo_moved_to_now(verbosity=0)
    before = list(
        Event.objects.order_by("session", "seq").values_list("session", "seq", "timestamp")
    )
    said = io.StringIO()
    import_demo_moved_to_now(stdout=said)
    assert f"{len(list(DEMO.glob('*.jsonl')))} unchanged" in said.getvalue()
    after = list(
        Event.objects.order_by("session", "seq").values_list("session", "seq", "timestamp")
    )
    assert after == before


def test_a_moved_log_that_differs_from_the_stored_one_is_still_refused(alice, tmp_path):
    import_demo_moved_to_now(verbosity=0)
    changed = tmp_path / "docs-fr.jsonl"
    changed.write_text((DEMO / "docs-fr.jsonl").read_text().replace("which audience?", "who?"))
    said = io.StringIO()
    with pytest.raises(CommandError, match="1 file"):
        call_command("import_jsonl", "--as-if-now", DEMO_WRITTEN_AS_OF, str(changed), stderr=said)
    assert "already exists with different events" in said.getvalue()


def test_a_claim_on_a_plan_with_no_lease_passes_over_a_running_node(alice, tmp_path):
    # An older plan file names no lease: nothing on it lapses, so a claim takes the ready
    # node and never asks whether the running one lapsed (which once failed the claim).
    moment = "2026-11-01T09:00:00.000000Z"
    nodes = [{"key": "a", "title": "A"}, {"key": "b", "title": "B"}]
    plan_line = {"plan": "old", "seq": 1, "type": PLAN_CREATE, "timestamp": moment}
    plan_line |= {"actor": "alice", "title": "Old", "nodes": nodes}
    start_line = {"session": "on-a", "seq": 1, "type": START, "timestamp": moment}
    start_line |= {"actor": "alice", "title": "A", "plan": "old", "node": "a"}
    (tmp_path / "old.jsonl").write_text(json.dumps(plan_line) + "\n")
    (tmp_path / "on-a.jsonl").write_text(json.dumps(start_line) + "\n")
    call_command("import_jsonl", str(tmp_path), stdout=io.StringIO())

    claimed = claim_next("old", user=alice)

    assert (claimed.event.plan, claimed.event.node) == ("old", "b")
