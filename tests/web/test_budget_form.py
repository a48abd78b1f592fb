"""The plan page's budget form (docs/rules.md, "Spend"): a person sets the plan's budget or a
node's, an amend, seeing what each spent; a budget the rules refuse re-shows the form
with the error and writes nothing; only the plan's owner or a lead sees it."""

import pytest
from django.test import Client

from sessions.domain.vocabulary import PLAN_CREATE
from sessions.models import Event
from sessions.readmodels import plan_views
from sessions.rules.append import append_event

pytestmark = pytest.mark.django_db


@pytest.fixture
def plan(alice):
    nodes = [{"key": "a", "title": "Migrate", "budget_usd": 1}, {"key": "b", "title": "Docs"}]
    append_event("rel", PLAN_CREATE, {"title": "Release", "nodes": nodes}, user=alice)
    return "rel"


def set_budget(client, owner, amount, expected_seq=1):
    body = {"owner": owner, "budget_usd": amount, "expected_seq": expected_seq}
    return client.post("/plans/rel/budget", body)


def test_the_form_lists_the_plan_and_each_node_with_what_it_spent(alice_client, plan):
    page = alice_client.get("/plans/rel/").content.decode()
    assert "The plan: spent $0.00, no budget" in page
    assert "Migrate (a): spent $0.00 of $1.00" in page


def test_setting_a_nodes_budget_amends_the_plan(alice_client, plan):
    assert set_budget(alice_client, "a", "2.50").status_code == 302
    assert plan_views.plan_view("rel").node("a").budget_usd == 2.5


def test_setting_the_plans_budget_amends_the_plan(alice_client, plan):
    set_budget(alice_client, "(plan)", "40")
    assert plan_views.plan_view("rel").budget_usd == 40


@pytest.mark.parametrize("amount", ["0", "-1", "1.234", "1000000.01", "lots"])
def test_a_bad_budget_is_shown_with_the_error_and_writes_nothing(alice_client, plan, amount):
    answer = set_budget(alice_client, "a", amount)
    assert answer.status_code == 400
    assert 'class="error" role="alert"' in answer.content.decode()
    assert Event.objects.count() == 1


def test_a_budget_for_a_node_not_listed_is_refused(alice_client, plan):
    assert set_budget(alice_client, "zz", "5").status_code == 400
    assert Event.objects.count() == 1


def test_someone_else_may_not_set_a_budget(bob, plan):
    client = Client()
    client.force_login(bob)
    assert "Set budget" not in client.get("/plans/rel/").content.decode()
    assert set_budget(client, "a", "5").status_code == 403
    assert Event.objects.count() == 1
