"""The kept node sessions of a plan (`plan_sessions`): caught up under the plan's lock
with the starts above the last one known and the closes of the sessions still running,
always equal to reading them whole, and read whole again when the table no longer holds
what was kept."""

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.db.models import Max
from django.test.utils import CaptureQueriesContext

from sessions import store
from sessions.domain import plans
from sessions.domain.vocabulary import CLOSE, PLAN_CREATE, START
from sessions.models import Event
from sessions.readmodels import plan_graphs, plan_sessions
from sessions.rules.append import append_event
from sessions.rules.claims import claim_next

pytestmark = pytest.mark.django_db(transaction=True)

NODES = [{"key": key, "title": key.upper()} for key in "abcd"]


@pytest.fixture
def plan(alice):
    append_event("p", PLAN_CREATE, {"title": "P", "nodes": NODES}, user=alice)


def kept(plan_id):
    """The node sessions kept as a claim reads them (under the plan's lock), after
    checking the node states worked out with them."""
    graph = plan_graphs.graph(plan_id)
    with store.holding(plan_id):
        found = plan_sessions.node_states(plan_id, graph)
    sessions = sorted(plan_sessions.KNOWN.get(plan_id).sessions.values())
    assert found.states == plans.node_states(graph, whole(plan_id))
    return sessions


def whole(plan_id):
    return sorted(store.node_sessions(plan_id))


def test_kept_sessions_and_states_follow_starts_and_closes(plan, alice):
    assert kept("p") == whole("p") == []
    first = claim_next("p", user=alice).event.session
    second = claim_next("p", user=alice).event.session
    assert kept("p") == whole("p")
    append_event(first, CLOSE, {"outcome": "failed"}, user=alice)
    claim_next("p", user=alice)
    assert kept("p") == whole("p")
    append_event(second, CLOSE, {}, user=alice)
    assert kept("p") == whole("p")
    assert {s.outcome for s in kept("p")} == {"failed", "done", None}


def test_a_caught_up_plan_reads_only_what_changed(plan, alice):
    for _ in range(3):
        claim_next("p", user=alice)
    kept("p")
    graph = plan_graphs.graph("p")
    with CaptureQueriesContext(connection) as captured, store.holding("p"):
        plan_sessions.node_states("p", graph)
    # The lock (PostgreSQL) and one statement, asking above the latest start known.
    reads = [q["sql"] for q in captured.captured_queries if "tower_event" in q["sql"]]
    assert len(reads) == 1
    latest = Event.objects.filter(plan="p", type=START).aggregate(Max("id"))["id__max"]
    assert plan_sessions.KNOWN.get("p").position == latest


def test_a_plan_whose_starts_left_the_table_is_read_whole_again(plan, alice):
    claim_next("p", user=alice)
    assert len(kept("p")) == 1
    call_command("flush", interactive=False, verbosity=0)  # as restoring a backup might
    append_event("p", PLAN_CREATE, {"title": "P", "nodes": NODES}, user=alice)
    assert kept("p") == whole("p") == []
    claim_next("p", user=alice)
    assert kept("p") == whole("p")


def test_inside_an_enclosing_transaction_nothing_is_kept(plan, alice):
    plan_sessions.KNOWN.forget()
    with transaction.atomic():
        claim_next("p", user=alice)
        graph = plan_graphs.graph("p")
        with store.holding("p"):
            found = plan_sessions.node_states("p", graph)
        assert found.states == plans.node_states(graph, whole("p")) and found.keys is None
    assert plan_sessions.KNOWN.get("p") is None


def test_a_claim_knows_its_key_is_new_without_asking_and_a_repeat_gets_the_first(
    plan, alice, monkeypatch
):
    asked = []
    claim_event = store.claim_event
    monkeypatch.setattr(store, "claim_event", lambda *a: asked.append(a) or claim_event(*a))
    first = claim_next("p", user=alice, idempotency_key="k1")
    claim_next("p", user=alice, idempotency_key="k2")
    assert asked == []
    again = claim_next("p", user=alice, idempotency_key="k1")
    assert asked == [("p", "alice", "k1")]
    assert again.event == first.event and not again.created
    assert len(whole("p")) == 2


def test_kept_states_follow_a_plan_with_needs(alice):
    nodes = [
        {"key": "a", "title": "A"},
        {"key": "b", "title": "B", "needs": ["a"]},
        {"key": "c", "title": "C", "needs": ["a"]},
        {"key": "d", "title": "D", "needs": ["b", "c"]},
    ]
    append_event("q", PLAN_CREATE, {"title": "Q", "nodes": nodes}, user=alice)
    first = claim_next("q", user=alice).event.session
    assert kept("q") == whole("q")  # and the states, checked by `kept`
    append_event(first, CLOSE, {}, user=alice)
    b = claim_next("q", user=alice).event
    c = claim_next("q", user=alice).event
    assert kept("q") == whole("q")
    append_event(b.session, CLOSE, {"outcome": "failed"}, user=alice)
    append_event(c.session, CLOSE, {}, user=alice)
    assert kept("q") == whole("q")
    with store.holding("q"):
        states = plan_sessions.node_states("q", plan_graphs.graph("q")).states
    assert states["d"][0] == plans.UPSTREAM_FAILED
