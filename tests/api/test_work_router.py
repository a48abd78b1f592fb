"""`session_work` over real HTTP (docs/rules.md, "Where the work lands"): a report lands in
the session's view, in any status, and is not activity; bad input is refused with its
field named; a merged pull request closes the session, and its worker is fenced."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.domain import vocabulary
from sessions.domain.vocabulary import START, WORK
from sessions.models import Event
from sessions.rules.append import append_event
from tests.api.conftest import assert_error, count

pytestmark = pytest.mark.django_db(transaction=True)

HEAD = "3f2c" + "0" * 36


def report(api, token, session="s1", key=None, **fields):
    headers = {"Idempotency-Key": key} if key else {}
    return api(
        "POST",
        f"/api/sessions/{session}/events",
        {"type": WORK, **fields},
        token=token,
        headers=headers,
    )


def view(api, token, session="s1"):
    return api("GET", f"/api/sessions/{session}", token=token).json()


def test_a_report_lands_in_the_sessions_work(api, session_s1, alice_token):
    answer = report(api, alice_token, repo="acme/shop", branch="fix-login", commit=HEAD)
    assert answer.status == 201
    assert answer.json()["session"]["work"] == {
        "repo": "acme/shop",
        "branch": "fix-login",
        "commit": HEAD,
        "pr": None,
        "checks": None,
    }


def test_checks_and_a_pull_request_roll_up_in_the_view(api, session_s1, alice_token):
    report(api, alice_token, commit=HEAD, pr=94, pr_url="https://github.com/acme/shop/pull/94")
    report(api, alice_token, commit=HEAD, check="ci/test", check_state="failure")
    report(api, alice_token, commit=HEAD, check="lint", check_state="success")
    found = view(api, alice_token)["work"]
    assert found["pr"] == {
        "number": 94,
        "url": "https://github.com/acme/shop/pull/94",
        "state": None,
    }
    assert found["checks"] == {
        "commit": HEAD,
        "state": "failure",
        "runs": {"ci/test": "failure", "lint": "success"},
    }


def test_a_report_is_not_activity(api, alice, alice_token):
    then = timezone.now() - timedelta(hours=2)
    append_event("quiet", START, {"title": "Quiet"}, user=alice, now=then)
    assert report(api, alice_token, session="quiet", branch="x").status == 201
    found = view(api, alice_token, "quiet")
    assert found["stale"] is True
    assert found["last_activity"] < found["last_event_at"]


def test_a_closed_session_takes_a_report_and_refuses_anything_else(api, session_s1, alice_token):
    api("POST", f"{session_s1}/events", {"type": "session_close"}, token=alice_token)
    assert report(api, alice_token, pr=3, pr_state="merged").status == 201
    refused = api("POST", f"{session_s1}/events", {"type": "session_progress"}, token=alice_token)
    assert_error(refused, 409, "transition_not_allowed")
    assert view(api, alice_token)["outcome"] == "done"  # the close stands


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({}, "repo"),
        ({"check": "ci", "check_state": "success"}, "commit"),
        ({"commit": HEAD, "check": "ci"}, "check_state"),
        ({"pr_state": "open"}, "pr"),
        ({"branch": "a..b"}, "branch"),
        ({"branch": "-x"}, "branch"),
        ({"branch": "has space"}, "branch"),
        ({"repo": "no-slash"}, "repo"),
        ({"commit": "ABC"}, "commit"),
        ({"pr": True}, "pr"),
        ({"pr": 5.0}, "pr"),
        ({"pr": 0}, "pr"),
        ({"pr": None}, "pr"),
        ({"pr": 1, "pr_url": "ftp://x"}, "pr_url"),
        ({"pr": 1, "pr_state": "gone"}, "pr_state"),
    ],
)
def test_a_bad_report_is_refused_with_its_field_named_and_writes_nothing(
    api, session_s1, alice_token, fields, named
):
    before = count()
    answer = report(api, alice_token, **fields)
    body = assert_error(answer, 400, "invalid")
    assert named in body["fields"], body
    assert count() == before


def test_a_url_for_a_pull_request_reported_before_is_taken(api, session_s1, alice_token):
    report(api, alice_token, pr=7)
    assert report(api, alice_token, pr_url="https://github.com/acme/shop/pull/7").status == 201


def test_a_merge_closes_the_session_and_fences_its_worker(api, session_s1, alice_token):
    answer = report(api, alice_token, pr=94, pr_state="merged", commit=HEAD)
    assert answer.status == 201
    closed = answer.json()["session"]
    assert (closed["status"], closed["outcome"]) == ("closed", "done")
    assert closed["next_action"] == f"PR #94 merged at {HEAD}"
    assert [e.type for e in Event.objects.filter(session="s1").order_by("seq")] == [
        START,
        WORK,
        vocabulary.CLOSE,
    ]
    pushed = api("POST", f"{session_s1}/events", {"type": "session_progress"}, token=alice_token)
    body = assert_error(pushed, 409, "transition_not_allowed")
    assert f"PR #94 merged at {HEAD}" in body["detail"]


def test_a_merge_without_a_commit_names_the_sessions_head(api, session_s1, alice_token):
    report(api, alice_token, commit=HEAD, pr=5)
    report(api, alice_token, pr_state="merged")
    assert view(api, alice_token)["next_action"] == f"PR #5 merged at {HEAD}"


def test_a_repeated_merge_appends_nothing(api, session_s1, alice_token):
    for _ in range(2):
        report(api, alice_token, key="delivery-1", pr=94, pr_state="merged")
    assert count() == 3


def test_a_merge_with_one_place_left_appends_only_its_close(
    api, session_s1, alice_token, monkeypatch
):
    monkeypatch.setattr(vocabulary, "MAX_STREAM_EVENTS", 2)
    assert report(api, alice_token, pr=94, pr_state="merged").status == 201
    assert [e.type for e in Event.objects.filter(session="s1").order_by("seq")] == [
        START,
        vocabulary.CLOSE,
    ]


def test_in_review_with_red_checks_needs_attention_since_they_turned_red(
    api, session_s1, alice_token
):
    report(api, alice_token, commit=HEAD)
    api("POST", f"{session_s1}/events", {"type": "session_review"}, token=alice_token)
    red = report(api, alice_token, commit=HEAD, check="ci/test", check_state="failure")
    turned = red.json()["event"]["timestamp"]
    found = view(api, alice_token)["attention"]
    assert found == {"kind": "checks_failed", "since": turned}
    listed = api("GET", "/api/sessions?attention=true", token=alice_token).json()["items"]
    assert [v["id"] for v in listed] == ["s1"]


def test_green_checks_in_review_need_no_attention(api, session_s1, alice_token):
    report(api, alice_token, commit=HEAD)
    api("POST", f"{session_s1}/events", {"type": "session_review"}, token=alice_token)
    report(api, alice_token, commit=HEAD, check="ci/test", check_state="failure")
    report(api, alice_token, commit=HEAD, check="ci/test", check_state="success")
    assert view(api, alice_token)["attention"] is None


def on_branch(api, token, session, repo="acme/shop", branch="fix-login"):
    assert (
        api("POST", "/api/sessions", {"id": session, "title": session}, token=token).status == 201
    )
    return report(api, token, session=session, repo=repo, branch=branch)


def test_a_later_session_on_the_same_repo_and_branch_is_duplicate_work(api, alice_token):
    on_branch(api, alice_token, "first")
    reported = on_branch(api, alice_token, "second", repo="ACME/Shop")  # GitHub's case
    found = view(api, alice_token, "second")["attention"]
    assert found == {
        "kind": "duplicate",
        "since": reported.json()["event"]["timestamp"],
        "with": "first",
    }
    assert view(api, alice_token, "first")["attention"] is None
    listed = api("GET", "/api/sessions?attention=true", token=alice_token).json()["items"]
    assert [(v["id"], v["attention"]["kind"]) for v in listed] == [("second", "duplicate")]


def test_duplicate_work_is_judged_against_every_owner_s_sessions(api, alice_token, bob_token):
    on_branch(api, bob_token, "first")
    on_branch(api, alice_token, "second")
    mine = api("GET", "/api/sessions?attention=true&owner=alice", token=alice_token).json()
    assert [(v["id"], v["attention"]["with"]) for v in mine["items"]] == [("second", "first")]


def test_a_shared_branch_is_never_duplicate_work(api, alice_token):
    on_branch(api, alice_token, "first", branch="main")
    on_branch(api, alice_token, "second", branch="main")
    assert view(api, alice_token, "second")["attention"] is None


def test_a_closed_session_on_the_branch_is_not_duplicated(api, alice_token):
    on_branch(api, alice_token, "first")
    api("POST", "/api/sessions/first/events", {"type": "session_close"}, token=alice_token)
    on_branch(api, alice_token, "second")
    assert view(api, alice_token, "second")["attention"] is None


def test_a_duplicate_since_is_when_its_branch_last_became_the_shared_one(api, alice_token):
    on_branch(api, alice_token, "first")
    on_branch(api, alice_token, "second", branch="elsewhere")
    moved = report(api, alice_token, session="second", branch="fix-login")
    found = view(api, alice_token, "second")["attention"]
    assert (found["kind"], found["since"]) == ("duplicate", moved.json()["event"]["timestamp"])
