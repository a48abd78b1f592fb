"""`work(events)`: where a session's work lands, as docs/rules.md ("Where the work lands")
states it, sentence by sentence; and `failing_since`, red checks' moment."""

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from sessions.domain import work as work_rules
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import CLOSE, START, WORK
from sessions.domain.work import Checks, PullRequest, Work, failing_since, work

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)
A, B = "a" * 40, "b" * 40


def stream(*reports):
    """A session's start, then each report (a dict of session_work fields, or an event)."""
    events = [EventRecord("s", 1, START, T0, "ann", title="t")]
    for seq, report in enumerate(reports, start=2):
        at = T0 + timedelta(minutes=seq)
        if isinstance(report, str):
            events.append(EventRecord("s", seq, report, at, "ann"))
        else:
            events.append(EventRecord("s", seq, WORK, at, "ann", **report))
    return events


def test_no_work_reported_is_none():
    assert work(stream()) is None


def test_repo_and_branch_are_the_latest_given():
    found = work(stream({"repo": "acme/shop", "branch": "one"}, {"branch": "two"}))
    assert (found.repo, found.branch) == ("acme/shop", "two")


def test_the_commit_is_the_latest_given_without_a_check():
    found = work(stream({"commit": A}, {"commit": B, "check": "ci", "check_state": "success"}))
    assert found.commit == A


def test_the_commit_is_none_until_given():
    assert work(stream({"branch": "x"})).commit is None


def test_a_pr_carries_its_url_and_state_given_since_its_number():
    found = work(stream({"pr": 7, "pr_url": "https://x/7"}, {"pr_state": "open"}))
    assert found.pr == PullRequest(7, "https://x/7", "open")


def test_a_different_pr_number_starts_its_url_and_state_afresh():
    found = work(stream({"pr": 7, "pr_url": "https://x/7", "pr_state": "closed"}, {"pr": 8}))
    assert found.pr == PullRequest(8, None, None)


def test_the_same_pr_number_again_keeps_its_url_and_state():
    found = work(stream({"pr": 7, "pr_url": "https://x/7"}, {"pr": 7, "pr_state": "open"}))
    assert found.pr == PullRequest(7, "https://x/7", "open")


def test_checks_are_null_unless_some_check_names_the_current_commit():
    assert (
        work(stream({"commit": A}, {"commit": B, "check": "ci", "check_state": "failure"})).checks
        is None
    )


def test_checks_hold_each_names_latest_state_at_the_current_commit():
    found = work(
        stream(
            {"commit": A},
            {"commit": A, "check": "ci", "check_state": "failure"},
            {"commit": A, "check": "lint", "check_state": "success"},
            {"commit": A, "check": "ci", "check_state": "success"},
        )
    )
    assert found.checks == Checks(A, "success", {"ci": "success", "lint": "success"})


def test_any_failed_run_makes_the_rollup_failure_else_any_pending_makes_it_pending():
    assert work_rules.rollup(["success", "pending", "failure"]) == "failure"
    assert work_rules.rollup(["success", "pending"]) == "pending"
    assert work_rules.rollup(["success"]) == "success"


def test_checks_at_an_older_commit_drop_out_when_the_commit_moves_and_count_when_it_returns():
    reports = [{"commit": A}, {"commit": A, "check": "ci", "check_state": "failure"}, {"commit": B}]
    assert work(stream(*reports)).checks is None
    assert work(stream(*reports, {"commit": A})).checks == Checks(A, "failure", {"ci": "failure"})


def test_a_report_may_come_before_the_head_moves_there():
    found = work(stream({"commit": B, "check": "ci", "check_state": "pending"}, {"commit": B}))
    assert found.checks == Checks(B, "pending", {"ci": "pending"})


def test_reports_after_a_close_still_count():
    found = work(stream({"branch": "x"}, CLOSE, {"pr": 3, "pr_state": "merged"}))
    assert found == Work(None, "x", None, PullRequest(3, None, "merged"), None)


def test_a_url_before_any_pr_is_passed_over():
    assert work(stream({"pr_url": "https://x/1"})).pr is None


def test_failing_since_is_when_the_head_s_rollup_turned_red():
    events = stream(
        {"commit": A},
        {"commit": A, "check": "ci", "check_state": "pending"},
        {"commit": A, "check": "ci", "check_state": "failure"},
        {"commit": A, "check": "lint", "check_state": "failure"},
    )
    assert failing_since(events) == events[3].timestamp


def test_failing_since_starts_again_when_the_head_moves_to_a_red_commit():
    events = stream(
        {"commit": A, "check": "ci", "check_state": "failure"},
        {"commit": B},
        {"commit": A},
    )
    assert failing_since(events) == events[3].timestamp


def test_failing_since_is_none_once_the_checks_are_green():
    events = stream(
        {"commit": A},
        {"commit": A, "check": "ci", "check_state": "failure"},
        {"commit": A, "check": "ci", "check_state": "success"},
    )
    assert failing_since(events) is None


def test_a_merge_note_names_the_pr_and_the_commit():
    assert work_rules.merge_note(94, A) == f"PR #94 merged at {A}"
    assert work_rules.merge_note(94, None) == "PR #94 merged"


reports = (
    st.fixed_dictionaries(
        {},
        optional={
            "repo": st.sampled_from(["acme/shop", "acme/api"]),
            "branch": st.sampled_from(["main", "fix", "feat"]),
            "commit": st.sampled_from([A, B, "c" * 40]),
            "pr": st.integers(1, 3),
            "pr_url": st.sampled_from(["https://x/1", "https://x/2"]),
            "pr_state": st.sampled_from(["open", "merged", "closed"]),
        },
    )
    .filter(bool)
    .flatmap(
        lambda given: st.one_of(
            st.just(given),
            st.fixed_dictionaries(
                {
                    "commit": st.sampled_from([A, B]),
                    "check": st.sampled_from(["ci", "lint"]),
                    "check_state": st.sampled_from(["pending", "success", "failure"]),
                }
            ),
        )
    )
)


@given(st.lists(reports, max_size=25))
def test_work_never_raises_and_its_checks_are_at_its_commit(given_reports):
    found = work(stream(*given_reports))
    if found is not None and found.checks is not None:
        assert found.checks.commit == found.commit
        assert found.checks.state == work_rules.rollup(found.checks.runs.values())


def test_place_since_is_the_first_report_of_the_current_repo_and_branch_pair():
    events = stream({"repo": "acme/shop"}, {"branch": "a"}, {"branch": "b"}, {"commit": A})
    assert work_rules.place_since(events) == events[3].timestamp


def test_place_since_is_none_without_a_repo():
    assert work_rules.place_since(stream({"branch": "a"})) is None
