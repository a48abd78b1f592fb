"""The list of plans is a summary (issue 52): each plan's progress and counts, never its
nodes, ready list or overlaps, so that one pattern-heavy plan does not take every plan
page with it; what it says agrees with each plan's own view."""

import pytest

from sessions.domain.plans import view as plan_view_module
from sessions.domain.vocabulary import CLOSE, START
from sessions.readmodels import plan_views
from sessions.rules.append import append_event

pytestmark = pytest.mark.django_db

SUMMARY_FIELDS = {
    "id", "title", "owner", "note", "status", "progress", "counts", "seq", "created_at",
    "last_event_at", "done_when", "usage", "repo", "budget_usd",
}  # fmt: skip


def test_a_listed_plan_says_its_progress_and_not_its_nodes(client, auth, plan):
    [listed] = client.get("/api/plans", **auth).json()["items"]
    assert set(listed) == SUMMARY_FIELDS
    assert listed["progress"] == {"done": 0, "total": 4}
    assert listed["counts"] == {"ready": 2, "waiting": 2}


def test_the_list_works_out_no_plans_overlaps(client, auth, alice_client, plan, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the list worked out a plan's overlaps")

    monkeypatch.setattr(plan_view_module, "overlaps", refuse)
    assert client.get("/api/plans", **auth).status_code == 200
    assert alice_client.get("/plans/").status_code == 200


def test_a_summary_says_what_the_plans_view_says(plan, alice):
    append_event("s1", START, {"plan": "rel", "node": "schema"}, user=alice)
    append_event("s1", CLOSE, {"outcome": "done"}, user=alice)
    append_event("s2", START, {"plan": "rel", "node": "api"}, user=alice)
    append_event("s3", START, {"plan": "rel", "node": "docs"}, user=alice)
    append_event("s3", CLOSE, {"outcome": "failed"}, user=alice)
    [view] = plan_views.plan_views(["rel"])
    [summary] = plan_views.plan_summaries(["rel"])
    for name in ("id", "title", "owner", "status", "seq", "done", "total", "counts", "repo"):
        assert getattr(summary, name) == getattr(view, name), name
    assert summary.counts == {"done": 1, "running": 1, "waiting": 1, "failed": 1}
