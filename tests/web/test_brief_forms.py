"""Briefs in the plan forms (docs/rules.md, "Running the plan"): the New plan form and the
amend form take them as “## key” headings, each followed by its text; the plan page shows
them; a brief that names no node, or text before any heading, re-shows the form with the
error and writes nothing."""

import pytest

from sessions.domain.vocabulary import PLAN_CREATE
from sessions.models import Event
from sessions.readmodels import plan_views
from sessions.rules.append import append_event
from sessions.web.forms import parse_briefs

pytestmark = pytest.mark.django_db

BRIEFS = "## a\nAdd the ledger table.\n\n  Keep the old one.\n## b\nWrite the docs.\n"


def new_plan(client, briefs):
    body = {"id": "rel", "title": "Release", "nodes": "a | Migrate\nb | Docs | a", "briefs": briefs}
    return client.post("/plans/new", body)


def test_a_new_plans_briefs_go_with_their_nodes(alice_client):
    assert new_plan(alice_client, BRIEFS).status_code == 302
    view = plan_views.plan_view("rel")
    assert view.node("a").brief == "Add the ledger table.\n\n  Keep the old one."
    assert view.node("b").brief == "Write the docs."


def test_the_plan_page_shows_each_brief(alice_client):
    new_plan(alice_client, BRIEFS)
    page = alice_client.get("/plans/rel/").content.decode()
    assert "Briefs" in page and "Add the ledger table." in page


def test_a_brief_for_no_node_is_refused_and_writes_nothing(alice_client):
    answer = new_plan(alice_client, "## c\nNobody's.")
    assert answer.status_code == 400
    assert "“## c” names no node of this plan." in answer.content.decode()
    assert not Event.objects.exists()


def test_text_before_the_first_heading_is_refused(alice_client):
    answer = new_plan(alice_client, "Just some text.")
    assert answer.status_code == 400
    assert "start each brief with a heading line" in answer.content.decode()
    assert not Event.objects.exists()


def test_an_amend_sets_a_brief_and_a_bare_heading_removes_one(alice_client, alice):
    nodes = [{"key": "a", "title": "A", "brief": "Old."}, {"key": "b", "title": "B"}]
    append_event("rel", PLAN_CREATE, {"title": "Release", "nodes": nodes}, user=alice)
    answer = alice_client.post(
        "/plans/rel/amend", {"briefs": "## a\n## b\nNew.", "expected_seq": 1}
    )
    assert answer.status_code == 302, answer.content.decode()[:500]
    view = plan_views.plan_view("rel")
    assert (view.node("a").brief, view.node("b").brief) == (None, "New.")


def test_briefs_keep_their_inner_blank_lines_and_drop_the_outer_ones():
    assert parse_briefs("## a\n\nOne.\n\nTwo.\n\n## b\n") == {"a": "One.\n\nTwo.", "b": None}
