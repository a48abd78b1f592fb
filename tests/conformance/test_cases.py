"""The conformance cases of every version with logs and expectations (v2: plans,
outcomes, time and as-of; v3: liveness), run by one set of tests over their folders:
import a version's logs (plans first), read every session and plan through the live
API as of the cases' `now` and of each snapshot, export byte for byte, import the
export again unchanged, and refuse each invalid file at its line, writing nothing.

The clock of the cases is fixed by asking "as of" their moment, which is the view at
`now = at` (docs/rules.md, "Time and attention"). What only v2 holds (metrics, lists, the
import's refusals by name) is tested beside this module."""

import json
import urllib.parse
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pytest

from sessions.domain import jsonl, projections
from sessions.models import Event
from sessions.readmodels import plan_views
from tests.conftest import CONFORMANCE
from tests.support.logs import export_logs, import_logs

# A case's session fields that are not the API view's: the export, and what only the
# pure functions say (tested beside this module).
NOT_IN_VIEW = ("canonical_export", "last_activity")
# A case's plan fields told otherwise than field for field.
PLAN_SHAPED = ("canonical_export", "node_order", "nodes", "attempts", "claimable")


@dataclass(frozen=True)
class Version:
    name: str

    @property
    def folder(self) -> Path:
        return CONFORMANCE / self.name

    @cached_property
    def expected(self) -> dict:
        return json.loads((self.folder / "expected.json").read_text(encoding="utf-8"))

    def query(self, at: str) -> str:
        minutes = self.expected["thresholds_minutes"]
        return (
            f"stale_after={minutes['stale']}&blocked_after={minutes['blocked']}"
            f"&review_after={minutes['review']}&at={urllib.parse.quote(at)}"
        )

    def __str__(self) -> str:
        return self.name


VERSIONS = [Version("v2"), Version("v3")]
SESSIONS = [(v, s) for v in VERSIONS for s in sorted(v.expected["sessions"])]
PLANS = [(v, p) for v in VERSIONS for p in sorted(v.expected["plans"])]
SNAPSHOTS = [(v, snapshot["at"]) for v in VERSIONS for snapshot in v.expected["as_of"]]
INVALID = [(v, f, line) for v in VERSIONS for f, line in sorted(v.expected["invalid"].items())]


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


def canonical(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def plan_facts(plan: dict, at: str) -> dict:
    """A plan's API answer as the cases state it, with what a claim would take then."""
    moment = jsonl.parse_timestamp(at)
    return {
        **plan,
        "nodes": {node["key"]: node["state"] for node in plan["nodes"]},
        "attempts": {node["key"]: node["attempts"] for node in plan["nodes"]},
        "claimable": plan_views.plan_view(plan["id"], at=moment).claimable,
    }


@pytest.fixture
def imported(request, db):
    version = request.node.callspec.params["version"]
    assert import_logs(version.folder / "logs") == (None, "")
    return version


@pytest.fixture
def reader(api, alice, token_for):
    token = token_for(alice)
    return lambda path: api("GET", path, token=token)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("version", "session_id"), SESSIONS, ids=str)
def test_each_session_reads_through_the_api_at_the_cases_now(version, session_id, reader, imported):
    want = version.expected["sessions"][session_id]
    answer = reader(f"/api/sessions/{session_id}?{version.query(version.expected['now'])}")
    assert answer.status == 200
    view = answer.json()
    stated = [name for name in want if name not in NOT_IN_VIEW]
    assert instant({name: view[name] for name in stated}) == instant(
        {name: want[name] for name in stated}
    )


@pytest.mark.parametrize(
    ("version", "session_id"),
    [(v, s) for v, s in SESSIONS if "last_activity" in v.expected["sessions"][s]],
    ids=str,
)
def test_last_activity_is_the_last_event_that_is_not_a_message(version, session_id):
    data = (version.folder / "logs" / f"{session_id}.jsonl").read_bytes()
    _, events = jsonl.decode_log(f"{session_id}.jsonl", data)
    want = jsonl.parse_timestamp(version.expected["sessions"][session_id]["last_activity"])
    assert projections.last_activity(events) == want


def stated_part(found, wanted):
    """What `found` says of the fields `wanted` states, at every depth: a later version
    adds fields (v4 adds `messages` to a node's `last_attempt`) that an earlier case
    does not state."""
    if isinstance(found, dict) and isinstance(wanted, dict):
        return {name: stated_part(found.get(name), value) for name, value in wanted.items()}
    return found


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("version", "plan_id"), PLANS, ids=str)
def test_each_plan_reads_through_the_api_at_the_cases_now(version, plan_id, reader, imported):
    want, now = version.expected["plans"][plan_id], version.expected["now"]
    answer = reader(f"/api/plans/{plan_id}?at={urllib.parse.quote(now)}")
    assert answer.status == 200
    plan = answer.json()
    stated = [name for name in want if name not in PLAN_SHAPED]
    assert {name: plan[name] for name in stated} == {name: want[name] for name in stated}
    assert [node["key"] for node in plan["nodes"]] == want["node_order"]
    for node in plan["nodes"]:
        wanted = want["nodes"][node["key"]]
        assert stated_part(node, wanted) == wanted, node["key"]
    if "claimable" in want:
        assert plan_facts(plan, now)["claimable"] == want["claimable"]
    log = reader(f"/api/plans/{plan_id}/events.jsonl")
    assert log.body == canonical(want["canonical_export"])


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("version", "at"), SNAPSHOTS, ids=str)
def test_each_session_and_plan_reads_as_of_each_snapshot(version, at, reader, imported):
    snapshot = next(s for s in version.expected["as_of"] if s["at"] == at)
    for session_id in sorted(version.expected["sessions"]):
        answer = reader(f"/api/sessions/{session_id}?{version.query(at)}")
        if session_id not in snapshot["sessions"]:
            assert answer.status == 404, session_id
            continue
        want, view = snapshot["sessions"][session_id], answer.json()
        assert instant({k: view[k] for k in want}) == instant(want), session_id
    for plan_id in sorted(version.expected["plans"]):
        answer = reader(f"/api/plans/{plan_id}?at={urllib.parse.quote(at)}")
        if plan_id not in snapshot["plans"]:
            assert answer.status == 404, plan_id
            continue
        want, facts = snapshot["plans"][plan_id], plan_facts(answer.json(), at)
        assert {k: facts[k] for k in want} == want, plan_id


@pytest.mark.django_db
@pytest.mark.parametrize("version", VERSIONS, ids=str)
def test_the_logs_export_byte_for_byte(version, tmp_path, imported):
    exported = export_logs(tmp_path)
    expected = version.expected
    for stream_id in [*sorted(expected["plans"]), *sorted(expected["sessions"])]:
        want = expected["plans"].get(stream_id) or expected["sessions"][stream_id]
        assert exported[f"{stream_id}.jsonl"] == canonical(want["canonical_export"]), stream_id


@pytest.mark.django_db
@pytest.mark.parametrize("version", VERSIONS, ids=str)
def test_exported_logs_import_again_unchanged(version, tmp_path, imported):
    first = export_logs(tmp_path / "first")
    error, _ = import_logs(tmp_path / "first")
    assert error is None
    assert export_logs(tmp_path / "second") == first


@pytest.mark.django_db
@pytest.mark.parametrize(("version", "file_name", "line"), INVALID, ids=str)
def test_each_invalid_file_is_refused_at_its_line_writing_nothing(
    version, file_name, line, imported
):
    before = Event.objects.count()
    error, stderr = import_logs(version.folder / "invalid" / file_name)
    assert error is not None
    assert f"{file_name}:{line}: " in stderr
    assert Event.objects.count() == before
