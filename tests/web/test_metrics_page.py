"""The metrics page: charts drawn on the server, every chart also a table, a window
picker that re-shows its errors."""

import pytest

from sessions.web import charts
from tests.support.cases import V2, v2_expected
from tests.support.logs import import_logs

pytestmark = pytest.mark.django_db


@pytest.fixture
def v2(db):
    assert import_logs(V2 / "logs") == (None, "")


def test_the_tables_hold_the_v2_window_s_metrics(alice_client, v2):
    window = v2_expected()["metrics"][0]
    page = alice_client.get("/metrics/?since=2026-11-28&until=2026-11-29")
    assert page.status_code == 200
    html = page.content.decode()
    throughput = html[html.index('id="throughput-table"') :]
    assert "<td>2026-11-28</td><td>2</td><td>2</td><td>1</td>" in throughput
    flow = html[html.index('id="flow-table"') :]
    counts = window["flow"]["2026-11-29"]
    row = "".join(f"<td>{counts[s]}</td>" for s in ("active", "blocked", "in_review", "closed"))
    assert f"<td>2026-11-29</td>{row}" in flow
    times = html[html.index('id="times-table"') :]
    assert '<th scope="row">Cycle time</th><td>35 min</td><td>1 h</td><td>5 h</td>' in times


def test_the_charts_are_drawn(alice_client, v2):
    html = alice_client.get("/metrics/?since=2026-11-28&until=2026-11-29").content.decode()
    assert html.count('<svg class="plot"') == 4  # nothing spent: no chart per owner
    assert html.count('<polygon class="area') == 4
    assert 'class="bar outcome-done' in html


def test_an_empty_window_is_re_shown_with_its_error(alice_client):
    page = alice_client.get("/metrics/?since=2026-11-29&until=2026-11-20")
    assert page.status_code == 400
    assert "From must not be after To" in page.content.decode()


def test_throughput_bars_stack_to_each_day_s_total():
    chart = charts.throughput(["2026-11-28"], {"2026-11-28": {"done": 2, "failed": 1}})
    heights = sorted(bar.height for bar in chart.bars)
    assert heights[1] == pytest.approx(2 * heights[0])
    assert chart.top == 3


def test_a_single_midnight_still_draws_a_band_per_status():
    counts = {"2026-11-29": {"active": 1, "blocked": 0, "in_review": 2, "closed": 3}}
    chart = charts.flow(["2026-11-29"], counts)
    assert [area.kind for area in chart.areas] == ["closed", "in_review", "blocked", "active"]
    assert all(len(area.points.split()) == 4 for area in chart.areas)


def times_found(cycle=(0, 5400, 7200), blocked=(None, None, None), review=(30, 30, 60)):
    return {
        key: dict(zip(("p50", "p85", "max"), values, strict=True))
        for key, values in (
            ("cycle_time", cycle),
            ("blocked_time", blocked),
            ("review_time", review),
        )
    }


def test_each_time_bar_has_its_value_written_beside_it():
    chart = charts.times(times_found())
    said = [text for _, _, text in chart.labels if text.startswith(("p50", "p85", "max"))]
    assert said[:3] == ["p50 0 s", "p85 1 h", "max 2 h"]
    assert said[-3:] == ["p50 30 s", "p85 30 s", "max 1 min"]


def test_a_zero_time_draws_a_sliver_and_no_time_draws_no_bar():
    chart = charts.times(times_found())
    cycle_p50, *_ = chart.bars
    assert cycle_p50.width == charts.ZERO_BAR
    assert [bar.width for bar in chart.bars[3:6]] == [0, 0, 0]
    assert [text for _, _, text in chart.labels][5:8] == ["p50 none", "p85 none", "max none"]


@pytest.mark.django_db
def test_an_event_at_the_calendar_s_last_day_leaves_the_metrics_answering(alice_client, alice):
    from datetime import UTC, datetime

    from sessions import store
    from sessions.domain.records import EventRecord
    from sessions.domain.vocabulary import BLOCK, START

    # As an import before its clock check could have stored it: history cannot be edited.
    now = datetime.now(UTC)
    with store.holding("far"):
        store.insert_many(
            [
                EventRecord("far", 1, START, now, "alice", title="t"),
                EventRecord(
                    "far", 2, BLOCK, datetime(9999, 12, 31, 12, tzinfo=UTC), "alice", reason="r"
                ),
            ]
        )
    assert alice_client.get("/metrics/").status_code == 200
    assert alice_client.get("/metrics/?since=9998-12-01&until=9998-12-31").status_code == 200


def test_a_window_past_the_calendar_is_re_shown_with_its_error(alice_client):
    page = alice_client.get("/metrics/?since=9999-12-01&until=9999-12-31")
    assert page.status_code == 400
    assert "years 2 to 9998" in page.content.decode()


def test_the_longest_time_bar_leaves_room_for_its_value():
    chart = charts.times(times_found())
    longest = max(chart.bars, key=lambda bar: bar.width)
    assert longest.x + longest.width + charts.VALUE_ROOM <= charts.LEFT + charts._plot_width()
