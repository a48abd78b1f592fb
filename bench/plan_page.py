"""Benchmark: the plan page's graph at 100 and 500 nodes, from layout to pixels.

    python bench/plan_page.py

On SQLite (the drawing does not touch the database), for plans of 100 and 500 nodes in
layers of 25, each node needing two of the layer before and, every third node, one four
layers back (an arrow crossing three columns in lanes of their own):
1. the layout alone (`drawing.draw` of the plan's view);
2. the whole page, in process (`/plans/<id>/` with the Django test client);
3. in Chromium (/usr/bin/chromium, when there is one), over HTTP from gunicorn: the
   browser's own share, from the response's last byte to the load event (parsing, the
   scripts, the graph's fitting, layout). (The first contentful paint was tried too: on
   repeated loads of one page Chromium seldom reports it.)
Median of RUNS runs (range), each run the median of its repeats.
"""

import os
import statistics
from pathlib import Path

from common import ROOT, report, setup_django, start_gunicorn, timed

SIZES = (100, 500)
RUNS = 5
PORT = 8766
CHROMIUM = Path("/usr/bin/chromium")


def plan_nodes(count):
    nodes = []
    for i in range(count):
        layer, place = divmod(i, 25)
        needs = {f"k{(layer - 1) * 25 + (place + d) % 25}" for d in (0, 7)} if layer else set()
        if layer >= 4 and i % 3 == 0:
            needs.add(f"k{(layer - 4) * 25 + (place + 3) % 25}")
        node = {"key": f"k{i}", "title": f"Task {i}: a title of a usual length"}
        nodes.append({**node, **({"needs": sorted(needs)} if needs else {})})
    return nodes


def spread(samples, unit=" ms"):
    return f"{statistics.median(samples):.1f}{unit} ({min(samples):.1f}–{max(samples):.1f})"


def browser_times(plan_ids, cookie):
    """Per plan: the browser's share of each load, in ms."""
    from playwright.sync_api import sync_playwright

    found = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.add_cookies(
            [{"name": "sessionid", "value": cookie, "url": f"http://127.0.0.1:{PORT}"}]
        )
        page = context.new_page()
        for plan_id in plan_ids:
            shares = []
            for _ in range(RUNS + 1):
                page.goto(f"http://127.0.0.1:{PORT}/plans/{plan_id}/", wait_until="load")
                shares.append(
                    page.evaluate(
                        """() => {
                          const nav = performance.getEntriesByType("navigation")[0];
                          return nav.loadEventEnd - nav.responseEnd;
                        }"""
                    )
                )
            found[plan_id] = shares[1:]  # the first load warms the caches
        browser.close()
    return found


def main():
    setup_django("sqlite")
    from django.contrib.auth.models import User
    from django.test import Client

    from sessions.readmodels import plan_views
    from sessions.rules.append import append_event
    from sessions.web import drawing

    planner = User.objects.create_user("planner")
    client = Client()
    client.force_login(planner)
    rows = []
    for size in SIZES:
        plan_id = f"p{size}"
        append_event(
            plan_id, "plan_create", {"title": f"{size}", "nodes": plan_nodes(size)}, user=planner
        )
        view = plan_views.plan_view(plan_id)
        layouts = [timed(lambda v=view: drawing.draw(v), repeat=9)[0] for _ in range(RUNS)]

        def page(p=plan_id):
            assert client.get(f"/plans/{p}/").status_code == 200

        pages = [timed(page, repeat=9)[0] for _ in range(RUNS)]
        size_kb = len(client.get(f"/plans/{plan_id}/").content) / 1024
        rows.append([size, spread(layouts), spread(pages), f"{size_kb:.0f} KB"])
    if CHROMIUM.exists():
        server = start_gunicorn("sqlite", PORT, ["--workers", "1"], PYTHONPATH=str(ROOT))
        try:
            times = browser_times([f"p{size}" for size in SIZES], client.cookies["sessionid"].value)
        finally:
            server.terminate()
            server.wait()
        for row, size in zip(rows, SIZES, strict=True):
            row.append(spread(times[f"p{size}"]))
    else:
        for row in rows:
            row.append("no Chromium")
    report(
        f"The plan page's graph (SQLite): median of {RUNS} runs (range)",
        rows,
        ["nodes", "layout", "page, in process", "page size", "Chromium's share"],
    )


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
