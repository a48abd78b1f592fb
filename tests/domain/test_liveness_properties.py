"""Properties of liveness's pure functions, for any history: heartbeats never change a
session's status, blockers or next action; messages never make a session look alive;
a lapsed node is never ready, and is claimable only when reclaimable."""

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from sessions.domain import plans, projections
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import ACTIVE, MESSAGE, PROGRESS, TRANSITIONS
from tests.support.streams import streams

T0 = datetime(2026, 11, 29, 8, tzinfo=UTC)


def _transitions_of(events):
    """A stream's transitions, renumbered: a stream the table allows, without its
    heartbeats and messages (which never changed its status)."""
    kept = [e for e in events if e.type in TRANSITIONS]
    return [e._replace(seq=n) for n, e in enumerate(kept, start=1)]


transitions = streams().map(_transitions_of)


def with_inserted(events, kind, places, note="x"):
    """`events` with an event of `kind` after each index in `places`, renumbered; each
    takes the moment of the event it follows."""
    out = []
    for index, event in enumerate(events):
        out.append(event)
        if index in places and not (index == len(events) - 1 and event.type == "session_close"):
            out.append(EventRecord("s", 0, kind, event.timestamp, "p", note=note))
    return [e._replace(seq=n) for n, e in enumerate(out, start=1)]


@given(transitions, st.sets(st.integers(0, 11)), st.none() | st.just("busy"))
def test_heartbeats_never_change_status_blockers_or_next_action(events, places, note):
    beating = with_inserted(events, PROGRESS, places, note)
    assert projections.status(beating) == projections.status(events)
    assert [b.reason for b in projections.blockers(beating)] == [
        b.reason for b in projections.blockers(events)
    ]
    assert projections.next_action(beating) == projections.next_action(events)


@given(transitions, st.sets(st.integers(0, 11)), st.integers(0, 10**6))
def test_messages_never_make_a_session_look_alive(events, places, minutes):
    now = events[-1].timestamp + timedelta(minutes=minutes)
    spoken = with_inserted(events, MESSAGE, places)
    spoken = [e._replace(timestamp=now) if e.type == MESSAGE else e for e in spoken]
    threshold = timedelta(minutes=30)
    assert projections.last_activity(spoken) == projections.last_activity(events)
    assert projections.is_stale(spoken, now, threshold) == projections.is_stale(
        events, now, threshold
    )
    lease = timedelta(minutes=45)
    assert projections.attention(spoken, now, lease=lease) == projections.attention(
        events, now, lease=lease
    )


@st.composite
def plan_histories(draw):
    """A chain-free plan of up to 8 nodes (each may need earlier ones), sessions on them
    (closed with any outcome, or open and silent for some minutes), and a lease."""
    count = draw(st.integers(1, 8))
    nodes = {}
    for i in range(count):
        needs = tuple(sorted(draw(st.sets(st.integers(0, i - 1), max_size=2)))) if i else ()
        nodes[f"k{i}"] = plans.Node(f"k{i}", f"K{i}", tuple(f"k{n}" for n in needs))
    graph = plans.Graph(nodes, draw(st.integers(1, 60)), draw(st.none() | st.integers(1, 3)))
    now = T0 + timedelta(hours=5)
    sessions, liveness = [], {}
    for n in range(draw(st.integers(0, 10))):
        key = draw(st.sampled_from(list(nodes)))
        opened = T0 + timedelta(minutes=n)
        outcome = draw(st.none() | st.sampled_from(["done", "failed", "abandoned", "lapsed"]))
        sessions.append(
            plans.NodeSession(f"s{n}", key, opened, outcome, opened if outcome else None)
        )
        if outcome is None:
            silent = timedelta(minutes=draw(st.integers(0, 120)))
            status = draw(st.sampled_from([ACTIVE, "blocked", "in_review"]))
            liveness[f"s{n}"] = plans.Liveness(status, now - silent)
    return graph, sessions, liveness, now


@given(plan_histories())
def test_a_lapsed_node_is_never_ready_and_is_claimable_only_when_reclaimable(history):
    graph, sessions, liveness, now = history
    found = plans.with_lapses(graph, plans.node_states(graph, sessions), sessions, liveness, now)
    attempts = plans.attempts_of(sessions)
    ready = plans.ready_nodes(graph, found)
    claimable = plans.claimable_nodes(graph, found, attempts)
    for key, (state, session) in found.items():
        if state == plans.LAPSED:
            assert key not in ready
            assert session is not None
            reclaimable = plans.is_reclaimable(graph, found, key, attempts.get(key, 0))
            assert (key in claimable) == reclaimable
    assert set(ready) <= set(claimable)


@given(plan_histories())
def test_a_node_lapses_only_when_every_unclosed_session_of_it_is_active_and_silent(history):
    graph, sessions, liveness, now = history
    found = plans.with_lapses(graph, plans.node_states(graph, sessions), sessions, liveness, now)
    unclosed = plans.unclosed_by_node(sessions)
    lease = timedelta(minutes=graph.lease)
    for key, (state, _) in found.items():
        silent = [
            liveness[s].status == ACTIVE and now - liveness[s].last_activity > lease
            for s in unclosed.get(key, [])
        ]
        assert (state == plans.LAPSED) == (bool(silent) and all(silent))
