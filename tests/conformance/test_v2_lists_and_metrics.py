"""What only the v2 conformance cases hold, beyond what every version's are checked for
(`test_cases`): the lists of plans and sessions as of a snapshot, filtered as then; the
flow metrics over their windows; the import's refusals named (a missing plan, a
cycle), and a dry run that checks a session against a plan of the same run."""

import urllib.parse

import pytest

from sessions.models import Event
from tests.support.cases import PLANS, V2, v2_expected
from tests.support.logs import import_logs


@pytest.fixture
def imported(db):
    assert import_logs(V2 / "logs") == (None, "")


@pytest.mark.django_db
def test_the_list_of_plans_reads_every_plan(alice_client, imported):
    answer = alice_client.get("/api/plans")
    assert answer.status_code == 200
    assert sorted(plan["id"] for plan in answer.json()["items"]) == PLANS


@pytest.mark.django_db
def test_a_session_naming_a_plan_is_refused_when_the_plan_is_not_there(tmp_path):
    (tmp_path / "s.jsonl").write_text(
        '{"type":"session_start","timestamp":"2026-11-28T08:00:00Z","actor":"x",'
        '"plan":"nowhere","node":"a"}\n'
    )
    error, stderr = import_logs(tmp_path)
    assert error is not None
    assert "s.jsonl:1: plan 'nowhere' does not exist" in stderr


@pytest.mark.django_db
def test_a_dry_run_checks_a_session_against_a_plan_of_the_same_run(tmp_path):
    (tmp_path / "p.jsonl").write_text(
        '{"type":"plan_create","timestamp":"2026-11-28T08:00:00Z","actor":"x",'
        '"title":"P","nodes":[{"key":"a","title":"A"}]}\n'
    )
    for name, node in (("on-a", "a"), ("on-b", "b")):
        (tmp_path / f"{name}.jsonl").write_text(
            '{"type":"session_start","timestamp":"2026-11-28T09:00:00Z","actor":"x",'
            f'"title":"T","plan":"p","node":"{node}"}}\n'
        )
    error, stderr = import_logs(tmp_path, dry_run=True)
    assert "on-a.jsonl" not in stderr
    assert "on-b.jsonl:1:" in stderr and "'b'" in stderr
    assert "1 file(s) refused" in str(error)
    assert not Event.objects.exists()


@pytest.mark.django_db
def test_a_cycle_is_refused_naming_it(imported):
    _, stderr = import_logs(V2 / "invalid" / "plan-cycle.jsonl")
    assert "a → b → a" in stderr


# Time, attention, as-of and metrics (v2), through the live API


def thresholds_query(at):
    minutes = v2_expected()["thresholds_minutes"]
    return (
        f"stale_after={minutes['stale']}&blocked_after={minutes['blocked']}"
        f"&review_after={minutes['review']}&at={urllib.parse.quote(at)}"
    )


@pytest.mark.django_db(transaction=True)
def test_the_session_list_as_of_a_snapshot_holds_the_sessions_of_then(
    api, alice, token_for, imported
):
    token = token_for(alice)
    for snapshot in v2_expected()["as_of"]:
        query = thresholds_query(snapshot["at"])
        answer = api("GET", f"/api/sessions?{query}&page_size=200", token=token)
        assert answer.status == 200
        listed = {view["id"]: view for view in answer.json()["items"]}
        assert set(listed) == set(snapshot["sessions"]), snapshot["at"]
        for session_id, want in snapshot["sessions"].items():
            assert {k: listed[session_id][k] for k in want} == want, (snapshot["at"], session_id)


@pytest.mark.django_db(transaction=True)
def test_the_session_list_as_of_a_snapshot_filters_by_the_status_and_attention_of_then(
    api, alice, token_for, imported
):
    token = token_for(alice)
    for snapshot in v2_expected()["as_of"]:
        query = thresholds_query(snapshot["at"])
        for status in ("active", "blocked", "in_review", "closed"):
            answer = api("GET", f"/api/sessions?{query}&status={status}", token=token)
            want = {i for i, v in snapshot["sessions"].items() if v.get("status") == status}
            assert {view["id"] for view in answer.json()["items"]} == want, (snapshot["at"], status)
        answer = api("GET", f"/api/sessions?{query}&attention=true", token=token)
        want = {i for i, v in snapshot["sessions"].items() if v.get("attention")}
        assert {view["id"] for view in answer.json()["items"]} == want, snapshot["at"]


@pytest.mark.django_db(transaction=True)
def test_v2_metrics_read_through_the_api(api, alice, token_for, imported):
    token = token_for(alice)
    for window in v2_expected()["metrics"]:
        since, until = (urllib.parse.quote(window[k]) for k in ("since", "until"))
        answer = api("GET", f"/api/metrics?since={since}&until={until}", token=token)
        assert answer.status == 200
        found = answer.json()
        assert {name: found[name] for name in window} == window
        assert found["spend"] == {
            "by_day": {},
            "by_owner": {},
            "by_agent": {},
        }  # v4's, and v2 spent nothing


@pytest.mark.django_db
def test_an_empty_metrics_window_is_refused(alice_client):
    answer = alice_client.get("/api/metrics?since=2026-11-29T00:00:00Z&until=2026-11-28T00:00:00Z")
    assert answer.status_code == 400
    assert "since must be before until" in answer.json()["detail"]


@pytest.mark.django_db
def test_an_as_of_moment_needs_a_utc_offset(alice_client, imported):
    assert alice_client.get("/api/sessions/quiet?at=2026-11-29T05:00:00").status_code == 400


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        "/api/sessions/quiet?at=0001-01-01T00:00:00%2B01:00",
        "/api/plans/fanout?at=9999-12-31T23:00:00Z",
        "/api/metrics?since=9999-12-31T12:00:00Z&until=9999-12-31T13:00:00Z",
        "/api/metrics?until=0001-01-03T00:00:00Z",
    ],
)
def test_moments_at_the_ends_of_the_calendar_are_refused_not_crashed(alice_client, query):
    answer = alice_client.get(query)
    assert answer.status_code == 400
    assert "years 2 to 9998" in answer.json()["detail"]


@pytest.mark.django_db
def test_a_number_is_not_a_moment(alice_client):
    answer = alice_client.get("/api/metrics?until=0.5")
    assert answer.status_code == 400
    assert "ISO 8601" in answer.json()["detail"]


@pytest.mark.django_db
def test_the_list_of_plans_as_of_a_moment_holds_the_plans_of_then(alice_client, imported):
    snapshot = v2_expected()["as_of"][0]
    answer = alice_client.get(f"/api/plans?at={urllib.parse.quote(snapshot['at'])}")
    assert answer.status_code == 200
    listed = {plan["id"]: plan for plan in answer.json()["items"]}
    assert set(listed) == set(snapshot["plans"])
    at = urllib.parse.quote(snapshot["at"])
    for plan_id, want in snapshot["plans"].items():
        # The list sums each plan up; its nodes are in its own view as of the moment.
        view = alice_client.get(f"/api/plans/{plan_id}?at={at}").json()
        assert {n["key"]: n["state"] for n in view["nodes"]} == want["nodes"]
        assert view["ready"] == want["ready"]
        counts = {}
        for state in want["nodes"].values():
            counts[state] = counts.get(state, 0) + 1
        assert listed[plan_id]["counts"] == counts
