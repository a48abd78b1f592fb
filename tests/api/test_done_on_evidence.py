"""Done on evidence (docs/rules.md, "Where the work lands"): under a plan's `done_when:
"merge"` a node whose latest session closed done is done only once its pull request
merged, failed when it closed unmerged, and `merging` until then — nothing that needs it
is ready meanwhile. Over real HTTP."""

import pytest

from sessions.domain.vocabulary import WORK
from tests.api.conftest import assert_error

pytestmark = pytest.mark.django_db(transaction=True)

NODES = [
    {"key": "fix", "title": "Fix the login"},
    {"key": "ship", "title": "Ship", "needs": ["fix"]},
]


def plan(api, token, **fields):
    body = {"id": "rel", "title": "Release", "nodes": NODES, **fields}
    answer = api("POST", "/api/plans", body, token=token)
    assert answer.status == 201, answer.body
    return answer.json()


def node(api, token, key):
    view = api("GET", "/api/plans/rel", token=token).json()
    return view, next(n for n in view["nodes"] if n["key"] == key)


def worked_and_closed(api, token, session="w1", pr_state=None):
    api("POST", "/api/sessions", {"id": session, "plan": "rel", "node": "fix"}, token=token)
    events = f"/api/sessions/{session}/events"
    api("POST", events, {"type": WORK, "branch": "fix-login", "pr": 94}, token=token)
    assert api("POST", events, {"type": "session_close"}, token=token).status == 201
    if pr_state:
        api("POST", events, {"type": WORK, "pr_state": pr_state}, token=token)


def test_a_plan_is_done_on_close_unless_it_says_otherwise(api, alice_token):
    assert plan(api, alice_token)["done_when"] == "close"
    worked_and_closed(api, alice_token)
    assert node(api, alice_token, "fix")[1]["state"] == "done"


def test_a_plan_on_a_repo_is_done_on_merge_unless_it_says_otherwise(api, alice_token):
    assert plan(api, alice_token, repo="acme/shop")["done_when"] == "merge"
    worked_and_closed(api, alice_token)
    assert node(api, alice_token, "fix")[1]["state"] == "merging"


def test_a_plan_on_a_repo_may_still_say_done_on_close(api, alice_token):
    assert plan(api, alice_token, repo="acme/shop", done_when="close")["done_when"] == "close"


def test_under_merge_a_closed_node_is_merging_and_holds_back_what_needs_it(api, alice_token):
    assert plan(api, alice_token, done_when="merge")["done_when"] == "merge"
    worked_and_closed(api, alice_token)
    view, fixing = node(api, alice_token, "fix")
    assert (fixing["state"], fixing["session"]) == ("merging", "w1")
    assert view["ready"] == [] and view["counts"]["merging"] == 1
    assert node(api, alice_token, "ship")[1]["state"] == "waiting"
    refused = api("POST", "/api/plans/rel/claim", {}, token=alice_token)
    assert_error(refused, 409, "nothing_ready")


def test_a_merge_after_the_close_makes_the_node_done(api, alice_token):
    plan(api, alice_token, done_when="merge")
    worked_and_closed(api, alice_token, pr_state="merged")
    view, fixing = node(api, alice_token, "fix")
    assert fixing["state"] == "done"
    assert view["ready"] == ["ship"]


def test_a_pull_request_closed_unmerged_fails_the_node(api, alice_token):
    plan(api, alice_token, done_when="merge")
    worked_and_closed(api, alice_token, pr_state="closed")
    assert node(api, alice_token, "fix")[1]["state"] == "failed"
    assert node(api, alice_token, "ship")[1]["state"] == "upstream_failed"


def test_a_merging_node_may_be_started_again_by_name(api, alice_token):
    plan(api, alice_token, done_when="merge")
    worked_and_closed(api, alice_token)
    retry = api(
        "POST", "/api/sessions", {"id": "w2", "plan": "rel", "node": "fix"}, token=alice_token
    )
    assert retry.status == 201
    assert node(api, alice_token, "fix")[1]["state"] == "running"


def test_an_amend_may_change_done_when_but_not_remove_it(api, alice_token):
    plan(api, alice_token, done_when="merge")
    worked_and_closed(api, alice_token)
    amend = {"type": "plan_amend", "done_when": "close"}
    assert api("POST", "/api/plans/rel/events", amend, token=alice_token).status == 201
    assert node(api, alice_token, "fix")[1]["state"] == "done"
    removed = {"type": "plan_amend", "done_when": None}
    assert_error(api("POST", "/api/plans/rel/events", removed, token=alice_token), 400, "invalid")


def test_done_when_is_close_or_merge(api, alice_token):
    body = {"title": "R", "nodes": NODES, "done_when": "review"}
    assert_error(api("POST", "/api/plans", body, token=alice_token), 400, "invalid")
