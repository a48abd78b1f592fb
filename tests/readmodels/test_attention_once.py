"""Attention is decided once (`domain.attention.decide`, issue 52): the session list's
`attention` true and false split every list between them, the kinds the list once did
not know (red checks, a spent budget) included, and what the list says agrees with each
session's view."""

import contextlib
from datetime import timedelta

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions.domain.vocabulary import (
    BLOCK,
    PLAN_CREATE,
    REVIEW,
    START,
    USAGE,
    WORK,
)
from sessions.readmodels import board, session_views
from sessions.rules.append import append_event
from sessions.rules.refusals import Refused
from sessions.store import SessionQuery

pytestmark = pytest.mark.django_db(transaction=True)

SHA = "a" * 40


def red_in_review(alice, session):
    append_event(session, START, {"title": "T"}, user=alice)
    work = {"repo": "acme/shop", "branch": session, "commit": SHA}
    append_event(session, WORK, work, user=alice)
    red = {"commit": SHA, "check": "ci", "check_state": "failure"}
    append_event(session, WORK, red, user=alice)
    append_event(session, REVIEW, {}, user=alice)


def over_budget(alice, session):
    nodes = [{"key": "n", "title": "N", "budget_usd": 1}]
    append_event("plan", PLAN_CREATE, {"title": "P", "nodes": nodes}, user=alice)
    append_event(session, START, {"plan": "plan", "node": "n"}, user=alice)
    usage = {
        "model": "claude-sonnet-4-5",
        "input_tokens": 10**9,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
    }
    append_event(session, USAGE, usage, user=alice)


def test_red_checks_and_a_spent_budget_are_listed_as_needing_attention_only(alice):
    red_in_review(alice, "red")
    over_budget(alice, "spent")
    append_event("fine", START, {"title": "T"}, user=alice)
    assert set(board.listing(SessionQuery(attention=True))) == {"red", "spent"}
    assert board.listing(SessionQuery(attention=False)) == ["fine"]


def test_the_list_says_what_each_view_says(alice):
    red_in_review(alice, "red")
    over_budget(alice, "spent")
    views = session_views.session_views(["red", "spent"])
    assert {i: views[i].attention.kind for i in views} == {
        "red": "checks_failed",
        "spent": "over_budget",
    }


steps = st.lists(st.sampled_from(["block", "review", "red", "quiet"]), max_size=3)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(sessions=st.lists(steps, min_size=1, max_size=4), hours=st.integers(0, 30))
def test_attention_true_and_false_split_every_list(alice, sessions, hours):
    for index, made in enumerate(sessions):
        session = f"s{index}-{timezone.now().timestamp()}"
        append_event(session, START, {"title": "T"}, user=alice)
        for step in made:
            with contextlib.suppress(Refused):  # a transition its status does not allow
                if step == "block":
                    append_event(session, BLOCK, {"reason": "why"}, user=alice)
                elif step == "review":
                    append_event(session, REVIEW, {}, user=alice)
                elif step == "red":
                    work = {"repo": "acme/x", "branch": session, "commit": SHA}
                    append_event(session, WORK, work, user=alice)
                    red = {"commit": SHA, "check": "ci", "check_state": "failure"}
                    append_event(session, WORK, red, user=alice)
    now = timezone.now() + timedelta(hours=hours)
    everything = board.listing(SessionQuery(), now)
    needing = board.listing(SessionQuery(attention=True), now)
    rest = board.listing(SessionQuery(attention=False), now)
    assert not set(needing) & set(rest)
    assert sorted(needing + rest) == sorted(everything)
    views = session_views.session_views(everything, now=now)
    assert {i for i in everything if views[i].attention is not None} == set(needing)
