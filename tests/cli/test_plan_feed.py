"""`ct dispatch`'s wait for its plan to move (`ct.plan_feed`), against a live tower over
HTTP: one long poll of the plan's feed ends as soon as the plan moves."""

import threading

import pytest
from ct.client import Tower
from ct.plan_feed import PlanFeed

from sessions.domain.vocabulary import PLAN_CREATE, START
from sessions.readmodels import feed as feed_model
from sessions.rules.append import append_event

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def idle(live_server, token, alice):
    append_event(
        "p", PLAN_CREATE, {"title": "P", "nodes": [{"key": "a", "title": "A"}]}, user=alice
    )
    waiting = PlanFeed(Tower(live_server.url, token), "p")
    waiting.before_claim()
    waiting.go_idle()
    assert waiting.after is not None and not waiting.worth_claiming()
    yield waiting
    feed_model.end_waits()


def test_an_event_of_the_plans_sessions_ends_the_wait_and_a_claim_is_worth_trying(idle, alice):
    later = threading.Timer(0.5, append_event, ("s", START, {"plan": "p", "node": "a"}))
    later.kwargs = {"user": alice}
    later.start()
    idle.wait(15)
    later.join()
    assert idle.after is None and idle.worth_claiming()


def test_an_event_between_the_claim_and_the_wait_still_ends_the_wait(live_server, token, alice):
    append_event(
        "p", PLAN_CREATE, {"title": "P", "nodes": [{"key": "a", "title": "A"}]}, user=alice
    )
    waiting = PlanFeed(Tower(live_server.url, token), "p")
    waiting.before_claim()  # then a claim that finds nothing, and meanwhile:
    append_event("s", START, {"plan": "p", "node": "a"}, user=alice)
    waiting.go_idle()
    waiting.wait(15)
    assert waiting.after is None


def test_another_plans_events_leave_it_idle(idle, alice):
    append_event(
        "q", PLAN_CREATE, {"title": "Q", "nodes": [{"key": "a", "title": "A"}]}, user=alice
    )
    idle.wait(1)
    assert idle.after is not None and not idle.worth_claiming()
