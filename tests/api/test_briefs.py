"""A node's brief over real HTTP (docs/rules.md, "Running the plan"): the text an agent is
given to do the node, in a plan's nodes and an amend's `briefs` (null removes it); in
the plan view and a claim's answer; too long or holding control characters, refused
with the node named and nothing written."""

import pytest

from tests.api.conftest import assert_error, count

pytestmark = pytest.mark.django_db(transaction=True)

BRIEF = "Add the ledger table.\n\n\tKeep the old one until the import runs."


def make_plan(api, token, **node_extra):
    nodes = [{"key": "a", "title": "A", **node_extra}, {"key": "b", "title": "B"}]
    answer = api("POST", "/api/plans", {"id": "p", "title": "P", "nodes": nodes}, token=token)
    return answer


def briefs(view):
    return {node["key"]: node["brief"] for node in view["nodes"]}


def test_a_nodes_brief_is_in_the_plan_view_and_null_for_one_without(api, alice_token):
    made = make_plan(api, alice_token, brief=BRIEF)
    assert made.status == 201, made.body
    assert briefs(made.json()) == {"a": BRIEF, "b": None}


def test_an_amend_sets_a_brief_and_null_removes_one(api, alice_token):
    make_plan(api, alice_token, brief=BRIEF)
    body = {"type": "plan_amend", "briefs": {"a": None, "b": "Write the docs."}}
    amended = api("POST", "/api/plans/p/events", body, token=alice_token)
    assert amended.status == 201, amended.body
    assert briefs(amended.json()["plan"]) == {"a": None, "b": "Write the docs."}


def test_a_claim_answers_with_its_nodes_brief(api, alice_token):
    make_plan(api, alice_token, brief=BRIEF)
    claimed = api("POST", "/api/plans/p/claim", {}, token=alice_token)
    assert claimed.status == 201, claimed.body
    assert (claimed.json()["node"], claimed.json()["brief"]) == ("a", BRIEF)


@pytest.mark.parametrize("brief", ["x" * 20_001, "ring the bell\x07", "   "])
def test_a_bad_brief_is_refused_naming_the_node_and_writes_nothing(api, alice_token, brief):
    refused = assert_error(make_plan(api, alice_token, brief=brief), 400, "invalid")
    assert "brief" in refused["detail"] and "nodes" in refused["detail"]
    assert count() == 0


def test_a_bad_brief_in_an_amend_is_refused_naming_the_node(api, alice_token):
    make_plan(api, alice_token)
    before = count()
    body = {"type": "plan_amend", "briefs": {"b": "x" * 20_001}}
    refused = assert_error(
        api("POST", "/api/plans/p/events", body, token=alice_token), 400, "invalid"
    )
    assert "briefs" in refused["detail"] and "'b'" in refused["detail"]
    assert count() == before


def test_a_brief_of_20000_characters_is_taken(api, alice_token):
    assert make_plan(api, alice_token, brief="x" * 20_000).status == 201
