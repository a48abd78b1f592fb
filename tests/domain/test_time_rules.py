"""Time in state, attention, as-of and metrics (`projections`, `metrics`): the v2
conformance cases on the pure functions, and properties."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions.domain import jsonl, metrics, plans, projections
from sessions.domain.jsonl import parse_timestamp
from sessions.domain.records import EventRecord
from tests.support.cases import V2, decoded, v2_expected, v2_node_sessions

EXPECTED = v2_expected()
NOW = parse_timestamp(EXPECTED["now"])
LIMITS = projections.Thresholds(
    *(timedelta(minutes=EXPECTED["thresholds_minutes"][k]) for k in ("stale", "blocked", "review"))
)
SESSIONS = sorted(EXPECTED["sessions"])


def attention_json(found):
    return found and {"kind": found.kind, "since": jsonl.format_timestamp(found.since)}


@pytest.mark.parametrize("session_id", SESSIONS)
def test_v2_sessions_spend_their_expected_time_and_need_their_expected_attention(session_id):
    want = EXPECTED["sessions"][session_id]
    events = decoded(session_id)
    assert projections.time_in_state(events, NOW) == want["time_in_state"]
    assert attention_json(projections.attention(events, NOW, LIMITS)) == want["attention"]
    assert projections.outcome(events) == want["outcome"]


@pytest.mark.parametrize("snapshot", EXPECTED["as_of"], ids=lambda s: s["at"])
def test_v2_snapshots_as_of_a_moment(snapshot):
    at = parse_timestamp(snapshot["at"])
    existing = {
        path.stem
        for path in (V2 / "logs").glob("*.jsonl")
        if decoded(path.stem)[0].type == "session_start" and decoded(path.stem)[0].timestamp <= at
    }
    assert existing == set(snapshot["sessions"])
    for session_id, want in snapshot["sessions"].items():
        events = projections.as_of(decoded(session_id), at)
        assert projections.status(events) == want["status"]
        assert projections.is_stale(events, at, LIMITS.stale) == want["stale"]
        assert attention_json(projections.attention(events, at, LIMITS)) == want["attention"]
    for plan_id, want in snapshot["plans"].items():
        sessions = [s for s in v2_node_sessions(plan_id) if s.opened_at <= at]
        sessions = [
            s._replace(outcome=projections.outcome(projections.as_of(decoded(s.session), at)))
            for s in sessions
        ]
        view = plans.plan_view(plan_id, projections.as_of(decoded(plan_id), at), sessions)
        assert view.status == want["status"]
        assert view.ready == want["ready"]
        assert view.critical_path == want["critical_path"]
        assert {"done": view.done, "total": view.total} == want["progress"]
        assert {n.key: n.state for n in view.nodes} == want["nodes"]


def json_metrics(found):
    found = {**found, "since": jsonl.format_timestamp(found["since"])}
    found["until"] = jsonl.format_timestamp(found["until"])
    found["throughput"] = {
        day: {k: n for k, n in counts.items() if n} for day, counts in found["throughput"].items()
    }
    found["flow"] = {day: dict(counts) for day, counts in found["flow"].items()}
    return found


@pytest.mark.parametrize("window", EXPECTED["metrics"], ids=lambda w: w["since"])
def test_v2_metrics_over_their_window(window):
    streams = [decoded(s) for s in SESSIONS]
    found = metrics.metrics(
        streams, parse_timestamp(window["since"]), parse_timestamp(window["until"])
    )
    assert json_metrics(found) == window


T0 = datetime(2026, 11, 29, 9, tzinfo=UTC)


def test_nearest_rank_takes_the_value_at_the_ceiling_position():
    assert metrics.nearest_rank([10, 20, 30, 40]) == {"p50": 20, "p85": 40, "max": 40}
    assert metrics.nearest_rank([]) == {"p50": None, "p85": None, "max": None}


def test_a_second_block_while_blocked_does_not_restart_the_clock():
    events = [
        EventRecord("s", 1, "session_start", T0, "a", title="T"),
        EventRecord("s", 2, "session_block", T0 + timedelta(hours=1), "a", reason="x"),
        EventRecord("s", 3, "session_block", T0 + timedelta(hours=4), "a", reason="y"),
    ]
    found = projections.attention(events, T0 + timedelta(hours=5, minutes=1), LIMITS)
    assert found == projections.Attention("blocked_long", T0 + timedelta(hours=1))


kinds = st.sampled_from(["session_block", "session_unblock", "session_review", "session_close"])


@given(st.lists(st.tuples(kinds, st.integers(0, 10_000)), max_size=12), st.integers(0, 10**6))
def test_time_in_state_never_exceeds_the_session_s_age(steps, later):
    events = [EventRecord("s", 1, "session_start", T0, "a", title="T")]
    moment = T0
    for seq, (kind, gap) in enumerate(steps, start=2):
        moment += timedelta(seconds=gap)
        events.append(EventRecord("s", seq, kind, moment, "a", reason="r"))
    now = moment + timedelta(seconds=later)
    spent = projections.time_in_state(events, now)
    assert all(value >= 0 for value in spent.values())
    assert sum(spent.values()) <= (now - T0).total_seconds()
