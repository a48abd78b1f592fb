"""The kept plan graphs: used again while a plan has not grown, folded again when it
has, never a graph of rows that were rolled back."""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from sessions import store
from sessions.domain import plans
from sessions.domain.vocabulary import PLAN_AMEND, PLAN_CREATE, START
from sessions.readmodels import plan_graphs
from sessions.rules.append import append_event

pytestmark = pytest.mark.django_db(transaction=True)

NODES = [{"key": "a", "title": "A"}, {"key": "b", "title": "B", "needs": ["a"]}]


@pytest.fixture
def plan(alice):
    append_event("p", PLAN_CREATE, {"title": "P", "nodes": NODES}, user=alice)


def folded(plan_id):
    return plans.graph_of(store.read_stream(plan_id))


def test_a_kept_graph_is_used_again_after_one_probe(plan):
    first = plan_graphs.graph("p")
    with CaptureQueriesContext(connection) as captured:
        again = plan_graphs.graph("p")
    assert again is first and again == folded("p")
    assert len(captured.captured_queries) == 1


def test_an_amended_plan_is_folded_again(plan, alice):
    plan_graphs.graph("p")
    append_event("p", PLAN_AMEND, {"retire": ["b"]}, user=alice)
    assert plan_graphs.graph("p").nodes["b"].retired
    assert plan_graphs.graph("p") == folded("p")


def test_a_graph_read_with_rows_later_rolled_back_is_not_used_again(plan, alice):
    created = store.read_stream("p")[-1]

    def amend(key):
        return created._replace(
            seq=2, type=PLAN_AMEND, title=None, nodes=[{"key": key, "title": key}]
        )

    with pytest.raises(RuntimeError), transaction.atomic():
        store.insert(amend("c"))
        assert "c" in plan_graphs.graph("p").nodes
        raise RuntimeError("rolled back")
    # Another event takes the rolled-back one's place (seq 2): its graph, not the kept one.
    store.insert(amend("d"))
    assert plan_graphs.graph("p") == folded("p")
    assert set(plan_graphs.graph("p").nodes) == {"a", "b", "d"}


def test_no_plan_has_no_graph(alice):
    append_event("s", START, {"title": "A session"}, user=alice)
    assert plan_graphs.graph("s") is None
    assert plan_graphs.graph("nothing") is None


def test_a_dropped_plan_is_folded_again(alice, monkeypatch):
    monkeypatch.setattr(plan_graphs.GRAPHS, "bound", 1)
    for plan_id in ("p", "q"):
        append_event(plan_id, PLAN_CREATE, {"title": plan_id, "nodes": NODES}, user=alice)
    for plan_id in ("p", "q", "p", "q"):
        assert plan_graphs.graph(plan_id) == folded(plan_id)
