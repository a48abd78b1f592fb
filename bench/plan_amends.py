"""Benchmark: an amend storm. Does a plan's cost grow with its history?

    python bench/plan_amends.py [sqlite] [postgresql]

One plan of 100 nodes is amended again and again with 1,500 edges: one amend adds them,
the next drops them (about 60 KB each, under every limit). At 10 and at 60 amends, in a
process whose read models are warm (as a server's are), the server time of: the plan
view's data (`GET /api/plans/<id>`), the plan's page, the plan list every user sees
(`GET /api/plans`), an amend refused for its graph (a need of no node), and two small
accepted amends (one edge added, then dropped: each one's graph is that of a new tail).
Median of RUNS runs of REPEAT timings each, and the range of the runs' medians; then
60 ÷ 10 (goal ≤ 1.5).

The requests go through Django's test client in process, so only the server's work is
timed. Written against the URLs and the append function only, so that the same script
measures older code from a checkout beside the project.
"""

import json
import statistics

from common import report, run_per_engine, setup_django, timed

NODES = 100
EDGES = 1_500
POINTS = (10, 60)
RUNS = 3
REPEAT = 9


def append_function():
    try:
        from sessions.rules.append import append_event
    except ImportError:  # the layout before the floor plan
        from sessions.append import append_event
    return append_event


def edges():
    """EDGES needs among the nodes, each from a later node to an earlier one (no cycle)."""
    found = []
    for later in range(1, NODES):
        for earlier in range(later):
            found.append({"node": f"n{later}", "needs": f"n{earlier}"})
            if len(found) == EDGES:
                return found
    return found


def main(engine):
    setup_django(engine)
    from django.contrib.auth.models import User
    from django.test import Client

    append_event = append_function()
    owner = User.objects.create_user("owner", password="pw")
    nodes = [{"key": f"n{i}", "title": f"Node {i}"} for i in range(NODES)]
    append_event("storm", "plan_create", {"title": "Storm", "nodes": nodes}, user=owner)
    web = Client()
    web.force_login(owner)
    token = _token(owner)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    added = edges()
    small = [{"node": f"n{NODES - 1}", "needs": "n0"}]  # not among `added`
    refused_amend = {"type": "plan_amend", "needs": [{"node": "n0", "needs": "no-such-node"}]}
    rows = []
    by_point = {}
    amends = 0
    for point in POINTS:
        while amends < point:
            fields = {"needs": added} if amends % 2 == 0 else {"drop_needs": added}
            append_event("storm", "plan_amend", fields, user=owner)
            amends += 1

        def view():
            assert api.get("/api/plans/storm").status_code == 200

        def page():
            assert web.get("/plans/storm/").status_code == 200

        def listing():
            assert api.get("/api/plans").status_code == 200

        def refused():
            answer = api.post(
                "/api/plans/storm/events",
                json.dumps(refused_amend),
                content_type="application/json",
            )
            assert answer.status_code == 400, answer.content

        def amend():
            for change in ({"needs": small}, {"drop_needs": small}):
                answer = api.post(
                    "/api/plans/storm/events",
                    json.dumps({"type": "plan_amend", **change}),
                    content_type="application/json",
                )
                assert answer.status_code == 201, answer.content

        measured = {}
        for name, function in (
            ("plan view data", view),
            ("plan page", page),
            ("plan list", listing),
            ("refused amend", refused),
            ("two one-edge amends", amend),
        ):
            medians = [timed(function, repeat=REPEAT, warmup=1)[0] for _ in range(RUNS)]
            measured[name] = medians
        by_point[point] = measured
    for name in by_point[POINTS[0]]:
        low, high = (statistics.median(by_point[p][name]) for p in POINTS)
        rows.append(
            [
                engine,
                name,
                *(
                    f"{statistics.median(by_point[p][name]):.1f} "
                    f"({min(by_point[p][name]):.1f}–{max(by_point[p][name]):.1f})"
                    for p in POINTS
                ),
                f"{high / low:.2f}",
            ]
        )
    report(
        f"Amend storm: {NODES} nodes, amends of {EDGES:,} edges ({engine}), ms, median of"
        f" {RUNS} runs (range)",
        rows,
        ["database", "request", *(f"at {p} amends" for p in POINTS), f"{POINTS[1]} ÷ {POINTS[0]}"],
    )


def _token(owner):
    try:
        from sessions.rules.tokens import create_token
    except ImportError:
        from sessions.tokens import create_token
    return create_token(owner, "bench")[1]


if __name__ == "__main__":
    run_per_engine(__file__, main)
