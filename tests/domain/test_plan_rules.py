"""The pure plan functions (`sessions.plans`): the derivations of docs/rules.md on the v2 cases,
and properties that hold for any graph and any history of node sessions."""

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessions.domain import plans
from sessions.domain.plans import graph as plan_graph
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import DONE, OUTCOMES, PLAN_AMEND, PLAN_CREATE
from tests.support.cases import PLANS, decoded, v2_expected, v2_node_sessions

T0 = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize("plan_id", PLANS)
def test_v2_plans_derive_as_expected_from_their_logs(plan_id):
    want = v2_expected()["plans"][plan_id]
    view = plans.plan_view(plan_id, decoded(plan_id), v2_node_sessions(plan_id))
    assert view.status == want["status"]
    assert view.ready == want["ready"]
    assert view.critical_path == want["critical_path"]
    assert view.counts == want["counts"]
    assert {"done": view.done, "total": view.total} == want["progress"]
    assert {n.key: n.state for n in view.nodes} == {k: v["state"] for k, v in want["nodes"].items()}


def event(seq, kind, **fields):
    return EventRecord("p", seq, kind, T0 + timedelta(minutes=seq), "x", **fields)


def test_a_cycle_is_named_from_where_it_was_found():
    create = event(1, PLAN_CREATE, title="T", nodes=[{"key": "a", "title": "A"}])
    graph = plans.apply(plans.Graph(), create)
    nodes = [{"key": "b", "title": "B", "needs": ["c"]}, {"key": "c", "title": "C", "needs": ["b"]}]
    with pytest.raises(plans.GraphError, match="b → c → b"):
        plans.apply(graph, event(2, PLAN_AMEND, nodes=nodes))


def test_dropping_a_need_that_is_not_there_is_refused():
    graph = plans.apply(
        plans.Graph(), event(1, PLAN_CREATE, title="T", nodes=[{"key": "a", "title": "A"}])
    )
    with pytest.raises(plans.GraphError) as refused:
        plans.apply(graph, event(2, PLAN_AMEND, drop_needs=[{"node": "a", "needs": "b"}]))
    assert refused.value.field == "drop_needs"


def test_a_done_node_between_unlocks_nothing_more():
    nodes = [
        {"key": "a", "title": "A"},
        {"key": "b", "title": "B", "needs": ["a"]},
        {"key": "c", "title": "C", "needs": ["b"]},
        {"key": "z", "title": "Z"},
        {"key": "y", "title": "Y", "needs": ["z"]},
    ]
    sessions = [plans.NodeSession("sb", "b", T0, DONE)]
    view = plans.plan_view("p", [event(1, PLAN_CREATE, title="T", nodes=nodes)], sessions)
    # a unlocks nothing through the done b, so z (which unlocks y) comes first.
    assert view.ready == ["z", "a", "c"]


# Properties over random graphs and node histories


@st.composite
def histories(draw):
    """A plan's create (acyclic by construction: a node needs earlier ones), an amend
    that may or may not fit, and sessions on some of its nodes."""
    size = draw(st.integers(min_value=1, max_value=12))
    keys = [f"k{i}" for i in range(size)]
    order = draw(st.permutations(keys))  # plan order differs from the dependency order
    rank = {key: i for i, key in enumerate(keys)}
    nodes = []
    for key in order:
        earlier = [k for k in keys if rank[k] < rank[key]]
        needs = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=3)) if earlier else []
        nodes.append({"key": key, "title": key.upper(), **({"needs": needs} if needs else {})})
    events = [event(1, PLAN_CREATE, title="T", nodes=nodes)]
    edge = st.fixed_dictionaries({"node": st.sampled_from(keys), "needs": st.sampled_from(keys)})
    amend = {
        "needs": draw(st.none() | st.lists(edge, min_size=1, max_size=3)),
        "retire": draw(
            st.none() | st.lists(st.sampled_from(keys), min_size=1, max_size=2, unique=True)
        ),
    }
    if any(amend.values()):
        events.append(event(2, PLAN_AMEND, **amend))
    sessions = []
    for i in range(draw(st.integers(min_value=0, max_value=10))):
        node = draw(st.sampled_from(keys))
        outcome = draw(st.sampled_from((None, *OUTCOMES)))
        sessions.append(plans.NodeSession(f"s{i}", node, T0 + timedelta(minutes=i), outcome))
    return events, sessions


@settings(max_examples=300)
@given(histories())
def test_states_partition_the_nodes(history):
    events, sessions = history
    view = plans.plan_view("p", events, sessions)
    graph = plans.graph_of(events)
    assert [node.key for node in view.nodes] == list(graph.nodes)
    assert all(node.state in plans.NODE_STATES for node in view.nodes)
    assert sum(view.counts.values()) == len(graph.nodes)
    assert view.total == len(graph.live())


@settings(max_examples=300)
@given(histories())
def test_every_ready_node_has_all_its_needs_done(history):
    events, sessions = history
    view = plans.plan_view("p", events, sessions)
    state = {node.key: node.state for node in view.nodes}
    assert sorted(view.ready) == sorted(k for k, s in state.items() if s == plans.READY)
    for key in view.ready:
        assert all(state[need] == DONE for need in view.node(key).needs)


@settings(max_examples=300)
@given(histories())
def test_the_critical_path_is_a_chain_of_needs_of_pending_nodes(history):
    events, sessions = history
    view = plans.plan_view("p", events, sessions)
    state = {node.key: node.state for node in view.nodes}
    path = view.critical_path
    assert all(state[key] in plans.NOT_DONE for key in path)
    for earlier, later in itertools.pairwise(path):
        assert earlier in view.node(later).needs
    assert bool(path) == any(s in plans.NOT_DONE for s in state.values())


@settings(max_examples=300)
@given(histories())
def test_an_accepted_amend_leaves_the_live_graph_acyclic(history):
    events, _ = history
    graph = plans.apply(plans.Graph(), events[0])
    if len(events) > 1:
        try:
            graph = plans.apply(graph, events[1])
        except plans.GraphError:
            return
    assert plan_graph._cycle(graph.nodes) is None
    live = {node.key for node in graph.live()}
    assert all(need in live for node in graph.live() for need in node.needs)


@settings(max_examples=200)
@given(histories())
def test_claims_take_the_ready_nodes_in_the_views_order(history):
    events, sessions = history
    graph = plans.graph_of(events)
    ready = plans.ready_nodes(graph, plans.node_states(graph, sessions))
    assert ready == plans.plan_view("p", events, sessions).ready


@settings(max_examples=300)
@given(histories())
def test_a_running_node_names_its_live_session(history):
    events, sessions = history
    view = plans.plan_view("p", events, sessions)
    live = {s.session for s in sessions if s.outcome is None}
    for node in view.nodes:
        assert (node.session is not None) == (node.state == plans.RUNNING)
        if node.session:
            assert node.session in live


def test_needs_keep_their_given_order_and_an_added_edge_goes_last():
    nodes = [
        {"key": "a", "title": "A"},
        {"key": "b", "title": "B"},
        {"key": "c", "title": "C", "needs": ["b", "a"]},
        {"key": "d", "title": "D"},
    ]
    graph = plans.apply(plans.Graph(), event(1, PLAN_CREATE, title="T", nodes=nodes))
    graph = plans.apply(graph, event(2, PLAN_AMEND, needs=[{"node": "c", "needs": "d"}]))
    assert graph.nodes["c"].needs == ("b", "a", "d")


@settings(max_examples=300)
@given(histories(), st.data())
def test_states_after_new_starts_are_the_states_of_all_the_sessions(history, data):
    events, sessions = history
    graph = plans.graph_of(events)
    keys = list(graph.nodes)
    started = [
        plans.NodeSession(f"n{i}", data.draw(st.sampled_from(keys)), T0 + timedelta(hours=i), None)
        for i in range(data.draw(st.integers(min_value=0, max_value=3)))
    ]
    before = plans.node_states(graph, sessions)
    after = plans.node_states_after(graph, before, sessions, started)
    assert after == plans.node_states(graph, [*sessions, *started])
    assert list(after) == list(plans.node_states(graph, [*sessions, *started]))
