"""Space over real HTTP (docs/rules.md, "Space"): a plan's repo and its nodes' paths; the
reservations of running nodes (not lapsed, not closed); touched paths in a session's
view; the overlap-aware ready list and claim order; bad patterns and paths refused with
the field named, nothing written."""

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.domain.vocabulary import PROGRESS, START
from sessions.rules.append import append_event
from tests.api.conftest import assert_error, count

pytestmark = pytest.mark.django_db(transaction=True)

NODES = [
    {"key": "billing", "title": "Billing", "paths": ["src/billing", "docs/billing.md"]},
    {"key": "ledger", "title": "Ledger", "paths": ["src/billing/ledger.py"]},
    {"key": "ui", "title": "UI", "paths": ["web/**/*.tsx"]},
    {"key": "notes", "title": "Notes"},
]


def make_plan(api, token, plan_id="p", repo="Acme/Shop", nodes=NODES, **extra):
    body = {"id": plan_id, "title": "Shop", "nodes": nodes, **extra}
    if repo is not None:
        body["repo"] = repo
    answer = api("POST", "/api/plans", body, token=token)
    assert answer.status == 201, answer.body
    return answer.json()


def start(api, token, node, session, plan_id="p"):
    body = {"plan": plan_id, "node": node, "id": session}
    assert api("POST", "/api/sessions", body, token=token).status == 201


def reserved(api, token, repo="acme/shop", path=None):
    query = f"repo={repo}" + (f"&path={path}" if path else "")
    answer = api("GET", f"/api/reservations?{query}", token=token)
    assert answer.status == 200, answer.body
    return answer.json()["items"]


def test_a_running_node_holds_its_paths_in_its_plans_repo(api, alice_token):
    make_plan(api, alice_token)
    start(api, alice_token, "billing", "s1")
    assert reserved(api, alice_token) == [
        {
            "plan": "p",
            "node": "billing",
            "session": "s1",
            "owner": "alice",
            "paths": ["src/billing", "docs/billing.md"],
            "agent": None,
        }
    ]


def test_a_reservation_says_which_agent_started_its_session(api, alice_token):
    make_plan(api, alice_token)
    body = {"plan": "p", "node": "billing", "id": "s1", "agent": "gemini 0.61.0"}
    assert api("POST", "/api/sessions", body, token=alice_token).status == 201
    assert [item["agent"] for item in reserved(api, alice_token)] == ["gemini 0.61.0"]


def test_the_repo_is_compared_case_insensitively(api, alice_token):
    make_plan(api, alice_token)
    start(api, alice_token, "billing", "s1")
    assert len(reserved(api, alice_token, repo="ACME/shop")) == 1


def test_a_path_narrows_to_the_reservations_covering_it(api, alice_token):
    make_plan(api, alice_token)
    start(api, alice_token, "billing", "s1")
    start(api, alice_token, "ui", "s2")
    assert [r["node"] for r in reserved(api, alice_token, path="src/billing/tax.py")] == ["billing"]
    assert [r["node"] for r in reserved(api, alice_token, path="web/app/cart.tsx")] == ["ui"]
    assert reserved(api, alice_token, path="README.md") == []


def test_a_pattern_that_backtracks_for_a_regular_expression_is_answered_at_once(api, alice_token):
    # Issue 52: 15.5 s for this pattern and a 50-character path, when `*` was `[^/]*`.
    hostile = [{"key": "h", "title": "H", "paths": ["*a*a*a*a*a*a*a*a*b", "src/*a*a*a*a*a*b"]}]
    make_plan(api, alice_token, nodes=hostile)
    start(api, alice_token, "h", "s1")
    began = time.monotonic()
    assert reserved(api, alice_token, path="a" * 50) == []
    assert reserved(api, alice_token, path="src/" + "a" * 490) == []
    assert time.monotonic() - began < 2


def test_reservations_come_by_plan_id_then_plan_order(api, alice_token):
    make_plan(api, alice_token, plan_id="q")
    make_plan(api, alice_token, plan_id="p")
    start(api, alice_token, "ui", "s1", plan_id="q")
    start(api, alice_token, "ui", "s2", plan_id="p")
    start(api, alice_token, "billing", "s3", plan_id="p")
    found = [(r["plan"], r["node"]) for r in reserved(api, alice_token)]
    assert found == [("p", "billing"), ("p", "ui"), ("q", "ui")]


def test_a_closed_session_holds_nothing(api, alice_token):
    make_plan(api, alice_token)
    start(api, alice_token, "billing", "s1")
    api("POST", "/api/sessions/s1/events", {"type": "session_close"}, token=alice_token)
    assert reserved(api, alice_token) == []


def test_a_lapsed_session_holds_nothing(api, alice, alice_token):
    make_plan(api, alice_token, lease=5)
    long_ago = timezone.now() - timedelta(minutes=30)
    append_event("s1", START, {"plan": "p", "node": "billing"}, user=alice, now=long_ago)
    assert reserved(api, alice_token) == []


def test_a_plan_without_a_repo_reserves_nothing(api, alice_token):
    make_plan(api, alice_token, repo=None)
    start(api, alice_token, "billing", "s1")
    assert reserved(api, alice_token) == []


def test_a_plan_whose_repo_was_amended_away_reserves_nothing_in_the_old_one(api, alice_token):
    make_plan(api, alice_token)
    start(api, alice_token, "billing", "s1")
    body = {"type": "plan_amend", "repo": "acme/other"}
    assert api("POST", "/api/plans/p/events", body, token=alice_token).status == 201
    assert reserved(api, alice_token) == []
    assert len(reserved(api, alice_token, repo="acme/other")) == 1


def test_an_amend_sets_and_clears_a_nodes_paths(api, alice_token):
    make_plan(api, alice_token)
    body = {"type": "plan_amend", "paths": {"notes": ["docs/notes"], "ui": None}}
    plan = api("POST", "/api/plans/p/events", body, token=alice_token).json()["plan"]
    paths = {node["key"]: node["paths"] for node in plan["nodes"]}
    assert (paths["notes"], paths["ui"]) == (["docs/notes"], [])


# Touched paths


def test_the_view_lists_the_touched_paths_latest_first(api, alice, alice_token):
    make_plan(api, alice_token)
    start(api, alice_token, "billing", "s1")
    append_event("s1", PROGRESS, {"paths": ["a.py", "b.py"]}, user=alice)
    append_event("s1", PROGRESS, {"note": "thinking"}, user=alice)
    append_event("s1", PROGRESS, {"paths": ["c.py", "a.py"]}, user=alice)
    view = api("GET", "/api/sessions/s1", token=alice_token).json()
    assert (view["touched"], view["touched_count"]) == (["a.py", "c.py", "b.py"], 3)


def test_a_long_streams_view_lists_its_touched_paths_too(api, alice, alice_token):
    make_plan(api, alice_token)
    start(api, alice_token, "billing", "s1")
    append_event("s1", PROGRESS, {"paths": ["a.py"]}, user=alice)
    for _ in range(120):  # past the length a view reads whole
        append_event("s1", PROGRESS, {"note": "working"}, user=alice)
    append_event("s1", PROGRESS, {"paths": ["b.py", "a.py"]}, user=alice)
    view = api("GET", "/api/sessions/s1", token=alice_token).json()
    assert (view["touched"], view["touched_count"]) == (["a.py", "b.py"], 2)


# The overlap-aware ready list


def test_a_ready_node_that_may_overlap_a_running_one_goes_last_and_says_with_which(
    api, alice_token
):
    make_plan(api, alice_token)
    start(api, alice_token, "billing", "s1")
    plan = api("GET", "/api/plans/p", token=alice_token).json()
    assert plan["ready"] == ["ui", "notes", "ledger"]
    overlaps = {node["key"]: node["overlaps"] for node in plan["nodes"]}
    assert overlaps == {"billing": [], "ledger": ["billing"], "ui": [], "notes": []}


def test_claims_hand_out_the_work_that_collides_with_nothing_first(api, alice_token):
    make_plan(api, alice_token)
    start(api, alice_token, "billing", "s1")
    taken = [
        api("POST", "/api/plans/p/claim", {}, token=alice_token).json()["node"] for _ in range(3)
    ]
    assert taken == ["ui", "notes", "ledger"]


# Bad input


@pytest.mark.parametrize(
    ("paths", "says"),
    [
        (["../secrets"], ".."),
        (["src//x"], "empty"),
        (["/etc"], "leading"),
        (["x" * 201], "200"),
        ([f"p{i}" for i in range(51)], "50"),
        (["src/\u0000x"], "control"),
    ],
)
def test_a_bad_pattern_is_refused_with_its_field_named_and_nothing_written(
    api, alice_token, paths, says
):
    nodes = [{"key": "a", "title": "A", "paths": paths}]
    answer = api("POST", "/api/plans", {"id": "p", "title": "P", "nodes": nodes}, token=alice_token)
    assert_error(answer, 400, "invalid")
    assert "nodes" in answer.json()["fields"]
    assert says in json.dumps(answer.json())
    assert count() == 0


@pytest.mark.parametrize(
    "paths", [["../x"], ["a//b"], ["/abs"], ["x" * 501], [f"f{i}" for i in range(101)], []]
)
def test_a_bad_touched_path_is_refused_with_its_field_named(api, alice_token, paths):
    make_plan(api, alice_token)
    start(api, alice_token, "billing", "s1")
    before = count()
    body = {"type": "session_progress", "paths": paths}
    answer = api("POST", "/api/sessions/s1/events", body, token=alice_token)
    assert_error(answer, 400, "invalid")
    assert "paths" in answer.json()["fields"]
    assert count() == before


def test_reservations_need_an_owner_name_repo(api, alice_token):
    assert_error(api("GET", "/api/reservations?repo=nope", token=alice_token), 400, "invalid")
