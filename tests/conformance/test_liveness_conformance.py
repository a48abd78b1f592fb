"""The v3 conformance cases (liveness: progress, messages, leases, lapsed nodes,
attempts): import the v3 logs (plans first), read every session and plan through the
live API as of the cases' `now` and of each snapshot, export byte for byte, and refuse
the v3 invalid files at their line. The clock of the cases is fixed by asking "as of"
their moment, which is the view at `now = at` (DESIGN.md, "As of a moment")."""

import json
import urllib.parse
from datetime import datetime

import pytest

from sessions.domain import jsonl, projections
from sessions.models import Event
from sessions.readmodels import plan_views
from tests.conftest import CONFORMANCE
from tests.support.logs import export_logs, import_logs

V3 = CONFORMANCE / "v3"


def v3_expected() -> dict:
    return json.loads((V3 / "expected.json").read_text(encoding="utf-8"))


EXPECTED = v3_expected()
SESSIONS = sorted(EXPECTED["sessions"])
PLANS = sorted(EXPECTED["plans"])
INVALID = sorted(EXPECTED["invalid"].items())
SNAPSHOTS = [snapshot["at"] for snapshot in EXPECTED["as_of"]]
SESSION_FIELDS = (
    "status",
    "outcome",
    "next_action",
    "stale",
    "progress",
    "messages",
    "message_count",
    "time_in_state",
    "attention",
)
PLAN_FIELDS = (
    "title",
    "owner",
    "status",
    "seq",
    "progress",
    "counts",
    "ready",
    "critical_path",
    "lease",
    "max_attempts",
    "lapsed",
)


def instant(value: object) -> object:
    """Timestamps compared as instants, whatever digits the view writes."""
    if isinstance(value, str) and len(value) >= 20 and value[4] == "-" and value[10] == "T":
        try:
            return jsonl.parse_timestamp(value)
        except ValueError:
            return value
    if isinstance(value, dict):
        return {key: instant(item) for key, item in value.items()}
    if isinstance(value, list):
        return [instant(item) for item in value]
    return value


def query(at: str) -> str:
    minutes = EXPECTED["thresholds_minutes"]
    return (
        f"stale_after={minutes['stale']}&blocked_after={minutes['blocked']}"
        f"&review_after={minutes['review']}&at={urllib.parse.quote(at)}"
    )


def canonical(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


@pytest.fixture
def imported(db):
    assert import_logs(V3 / "logs") == (None, "")


@pytest.fixture
def reader(api, alice, token_for):
    token = token_for(alice)
    return lambda path: api("GET", path, token=token)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("session_id", SESSIONS)
def test_v3_sessions_read_through_the_api_at_now(session_id, reader, imported):
    want = EXPECTED["sessions"][session_id]
    answer = reader(f"/api/sessions/{session_id}?{query(EXPECTED['now'])}")
    assert answer.status == 200
    view = answer.json()
    for name in SESSION_FIELDS:
        assert instant(view[name]) == instant(want[name]), name


@pytest.mark.django_db
@pytest.mark.parametrize("session_id", SESSIONS)
def test_v3_last_activity_is_the_last_event_that_is_not_a_message(session_id):
    data = (V3 / "logs" / f"{session_id}.jsonl").read_bytes()
    _, events = jsonl.decode_log(f"{session_id}.jsonl", data)
    want = jsonl.parse_timestamp(EXPECTED["sessions"][session_id]["last_activity"])
    assert projections.last_activity(events) == want


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("plan_id", PLANS)
def test_v3_plans_read_through_the_api_at_now(plan_id, reader, imported):
    want = EXPECTED["plans"][plan_id]
    answer = reader(f"/api/plans/{plan_id}?at={urllib.parse.quote(EXPECTED['now'])}")
    assert answer.status == 200
    plan = answer.json()
    for name in PLAN_FIELDS:
        assert plan[name] == want[name], name
    assert [node["key"] for node in plan["nodes"]] == want["node_order"]
    for node in plan["nodes"]:
        got = {name: node[name] for name in want["nodes"][node["key"]]}
        assert got == want["nodes"][node["key"]], node["key"]


@pytest.mark.django_db
@pytest.mark.parametrize("plan_id", PLANS)
def test_v3_a_claim_at_now_would_take_the_claimable_nodes_in_order(plan_id, imported):
    now = jsonl.parse_timestamp(EXPECTED["now"])
    assert (
        plan_views.plan_view(plan_id, at=now).claimable == EXPECTED["plans"][plan_id]["claimable"]
    )


@pytest.mark.django_db
def test_v3_logs_export_byte_for_byte(tmp_path, imported):
    exported = export_logs(tmp_path)
    for stream_id in PLANS + SESSIONS:
        want = EXPECTED["plans"].get(stream_id) or EXPECTED["sessions"][stream_id]
        assert exported[f"{stream_id}.jsonl"] == canonical(want["canonical_export"]), stream_id


@pytest.mark.django_db
def test_exported_v3_logs_import_again_unchanged(tmp_path, imported):
    first = export_logs(tmp_path / "first")
    error, _ = import_logs(tmp_path / "first")
    assert error is None
    assert export_logs(tmp_path / "second") == first


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("at", SNAPSHOTS)
def test_v3_sessions_as_of_each_snapshot(at, reader, imported):
    snapshot = next(s for s in EXPECTED["as_of"] if s["at"] == at)
    for session_id in SESSIONS:
        answer = reader(f"/api/sessions/{session_id}?{query(at)}")
        if session_id not in snapshot["sessions"]:
            assert answer.status == 404, session_id
            continue
        want, view = snapshot["sessions"][session_id], answer.json()
        assert instant({k: view[k] for k in want}) == instant(want), session_id


@pytest.mark.django_db
@pytest.mark.parametrize("at", SNAPSHOTS)
def test_v3_plans_as_of_each_snapshot(at, imported):
    snapshot = next(s for s in EXPECTED["as_of"] if s["at"] == at)
    moment = datetime.fromisoformat(at.replace("Z", "+00:00"))
    for plan_id, want in snapshot["plans"].items():
        view = plan_views.plan_view(plan_id, at=moment)
        got = {
            "status": view.status,
            "ready": view.ready,
            "lapsed": view.lapsed,
            "claimable": view.claimable,
            "progress": {"done": view.done, "total": view.total},
            "critical_path": view.critical_path,
            "lease": view.lease,
            "max_attempts": view.max_attempts,
            "nodes": {node.key: node.state for node in view.nodes},
            "attempts": {node.key: node.attempts for node in view.nodes},
        }
        assert got == want, plan_id


@pytest.mark.django_db
@pytest.mark.parametrize(("file_name", "line"), INVALID)
def test_v3_invalid_files_are_refused_at_their_line_writing_nothing(file_name, line, imported):
    before = Event.objects.count()
    error, stderr = import_logs(V3 / "invalid" / file_name)
    assert error is not None
    assert f"{file_name}:{line}: " in stderr
    assert Event.objects.count() == before
