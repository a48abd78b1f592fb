"""The plan's graph in Chromium at 1,280 px: the demo plan whole with every title in full,
40 nodes in 7 columns at full size, 100 nodes fitted, zoomed and panned by keyboard, full
titles on hover and focus and in the node list, the critical path and lapsed nodes told
apart without colour."""

import pytest
from playwright.sync_api import expect

from sessions.domain.vocabulary import PLAN_CREATE, START
from sessions.rules.append import append_event
from tests.browser.conftest import ARTIFACTS
from tests.support.logs import DEMO, import_demo_moved_to_now, import_logs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAPTOP = 1280


def frame(page):
    return page.locator("#plan-graph")


def overflow(page) -> int:
    """How far the graph's frame scrolls sideways (0: the graph is whole)."""
    return frame(page).evaluate("graph => graph.scrollWidth - graph.clientWidth")


def scale(page) -> float:
    return float(frame(page).get_attribute("data-scale"))


def shown_title(page, key) -> str:
    return page.locator(f"g.node[data-node='{key}'] text.title").evaluate(
        "text => [...text.querySelectorAll('tspan')].map(line => line.textContent).join(' ')"
    )


def columns_plan(alice, plan_id, count, columns, title=lambda i: f"Step {i} of the work"):
    """`count` nodes in `columns` columns, each needing one or two of the column before."""
    per = count // columns
    nodes = []
    for i in range(count):
        column = min(i // per, columns - 1)
        node = {"key": f"n{i:03d}", "title": title(i)}
        if column:
            before = range((column - 1) * per, column * per)
            node["needs"] = sorted({f"n{before[i % per]:03d}", f"n{before[(i * 7) % per]:03d}"})
        nodes.append(node)
    append_event(plan_id, PLAN_CREATE, {"title": plan_id, "nodes": nodes}, user=alice)
    return nodes


def test_the_demo_plan_is_whole_at_1280_px_with_every_title_in_full(page_as, alice):
    import_demo_moved_to_now(verbosity=0)  # as `make demo` shows it: the README's picture
    page = page_as(alice, "/plans/payments-v2/", width=LAPTOP)
    expect(frame(page)).to_have_attribute("data-scale", "1.000")
    assert overflow(page) == 0
    titles = page.locator("g.node").evaluate_all(
        "nodes => nodes.map(node => [node.dataset.node, node.querySelector('title').textContent])"
    )
    assert len(titles) == 15
    for key, tip in titles:
        assert tip.startswith(shown_title(page, key) + f" ({key})")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "plan.png"), full_page=True)


def test_the_critical_path_and_lapsed_nodes_differ_by_more_than_colour(page_as, alice):
    assert import_logs(DEMO) == (None, "")
    page = page_as(alice, "/plans/payments-v2/", width=LAPTOP)

    def stroke(selector, prop):
        return page.locator(selector).first.evaluate(f"e => getComputedStyle(e).{prop}")

    assert stroke("g.node:not(.critical):not(.state-lapsed) rect", "strokeWidth") == "1px"
    assert stroke("g.node.critical rect", "strokeWidth") == "3px"
    assert stroke("path.need:not(.critical)", "strokeWidth") == "1.5px"
    assert stroke("path.need.critical", "strokeWidth") == "3px"
    assert stroke("g.node.state-lapsed rect", "strokeDasharray") != "none"
    expect(page.locator("g.node.state-lapsed text.sub").first).to_contain_text("lapsed")


def test_forty_nodes_in_seven_columns_read_at_full_size(page_as, alice):
    columns_plan(alice, "forty", 42, 7)
    page = page_as(alice, "/plans/forty/", width=LAPTOP)
    expect(page.locator("g.node")).to_have_count(42)
    assert scale(page) == 1 and overflow(page) == 0
    assert shown_title(page, "n000") == "Step 0 of the work"


def test_a_hundred_node_plan_fits_then_zooms_and_pans_by_keyboard(page_as, alice):
    columns_plan(alice, "hundred", 100, 20)
    page = page_as(alice, "/plans/hundred/", width=LAPTOP)
    expect(page.locator("g.node")).to_have_count(100)
    page.get_by_role("button", name="Fit").click()
    assert overflow(page) == 0
    fitted = scale(page)
    assert fitted < 0.5
    frame(page).focus()
    page.keyboard.press("+")
    assert scale(page) == pytest.approx(fitted * 1.25, abs=0.002)
    page.get_by_role("button", name="Actual size").click()
    assert scale(page) == 1 and overflow(page) > 0
    expect(page.locator(".zoom-level")).to_have_text("100%")
    frame(page).focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("End")
    expect(frame(page)).not_to_have_js_property("scrollLeft", 0)
    page.keyboard.press("0")
    assert scale(page) == fitted and overflow(page) == 0


def test_a_node_shows_its_full_title_on_focus_and_on_hover(page_as, alice):
    long_title = (
        "Reconcile every ledger entry against the PSP's settlement files, region by region,"
        " and write down each difference with the entry, the file and who looked at it"
    )
    nodes = [
        {"key": "long", "title": long_title},
        {"key": "next", "title": "Then this", "needs": ["long"]},
    ]
    append_event("titles", PLAN_CREATE, {"title": "Titles", "nodes": nodes}, user=alice)
    page = page_as(alice, "/plans/titles/", width=LAPTOP)
    assert shown_title(page, "long").endswith("…")
    detail = page.locator("#plan-graph-detail")
    page.locator("g.node[data-node='long'] a").focus()
    expect(detail).to_contain_text(long_title)
    page.locator("g.node[data-node='next'] rect").hover()
    expect(detail).to_contain_text("Then this (next): waiting")


def test_the_node_list_holds_every_node_and_a_box_leads_to_its_entry(page_as, alice):
    nodes = columns_plan(alice, "listed", 12, 3)
    append_event("s-one", START, {"plan": "listed", "node": "n000"}, user=alice)
    page = page_as(alice, "/plans/listed/", width=LAPTOP)
    entries = page.locator(".node-list li")
    expect(entries).to_have_count(12)
    expect(entries.first).to_contain_text("Step 0 of the work")
    expect(page.locator("g.node[data-node='n000'] a")).to_have_attribute("href", "/sessions/s-one/")
    page.locator("g.node[data-node='n011'] a").click()
    expect(page.locator("#node-n011")).to_be_visible()
    expect(page.locator("#node-n011")).to_contain_text(f"needs {', '.join(nodes[11]['needs'])}")


def test_the_zoom_stays_when_the_plan_refreshes(page_as, alice):
    columns_plan(alice, "kept", 12, 3)
    page = page_as(alice, "/plans/kept/", width=LAPTOP)
    page.get_by_role("button", name="Zoom in").click()
    zoomed = scale(page)
    append_event("s-kept", START, {"plan": "kept", "node": "n000"}, user=alice)
    expect(page.locator("g.node[data-node='n000']")).to_have_attribute("data-state", "running")
    expect(frame(page)).to_have_attribute("data-scale", f"{zoomed:.3f}")


def test_without_javascript_the_graph_is_drawn_and_fitted_with_no_dead_buttons(page_as, alice):
    columns_plan(alice, "plain", 100, 20)
    page = page_as(alice, "/plans/plain/", width=LAPTOP, javascript=False)
    expect(page.locator("g.node")).to_have_count(100)
    expect(page.locator(".graph-tools")).to_be_hidden()
    assert overflow(page) == 0  # the stylesheet fits it


PHONE = 390


@pytest.mark.parametrize("count", [5, 40])
def test_on_a_phone_the_graph_opens_at_a_readable_size_with_fit_one_tap_away(page_as, alice, count):
    columns_plan(alice, f"phone{count}", count, min(count, 7))
    page = page_as(alice, f"/plans/phone{count}/", width=PHONE)
    expect(frame(page)).to_have_attribute("data-scale", "0.500")
    assert overflow(page) > 0  # it pans from there
    page.get_by_role("button", name="Fit").click()
    assert scale(page) < 0.5 and overflow(page) == 0


def test_the_graphs_zoom_choice_is_kept_per_plan(page_as, alice):
    columns_plan(alice, "kept-fit", 40, 7)
    columns_plan(alice, "other", 40, 7)
    page = page_as(alice, "/plans/kept-fit/", width=PHONE)
    page.get_by_role("button", name="Fit").click()
    fitted = scale(page)
    page.reload()
    expect(frame(page)).to_have_attribute("data-scale", f"{fitted:.3f}")
    page.goto(page.url.replace("/kept-fit/", "/other/"))
    expect(frame(page)).to_have_attribute("data-scale", "0.500")  # another plan: its own
