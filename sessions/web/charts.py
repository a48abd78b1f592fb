"""The metrics page's charts as SVG geometry. Pure: no Django, no I/O.

Server-rendered SVG, like the plan's drawing: three small charts need no charting
library, no script and no network, work without JavaScript, and each is also shown as
a table. Coordinates are in a fixed view box; the page scales it to its width.
"""

from collections.abc import Callable
from dataclasses import dataclass

from sessions.domain.metrics import FLOW_STATUSES
from sessions.domain.moments import spoken_length
from sessions.domain.vocabulary import OUTCOMES

WIDTH, HEIGHT = 640, 220
LEFT, BOTTOM, TOP = 48, 28, 10  # room for the axis labels
ZERO_BAR = 2  # a zero's bar: a sliver
VALUE_ROOM = 80  # the room after the longest bar, for its value
TIMES = (
    ("cycle_time", "Cycle time"),
    ("blocked_time", "Time blocked"),
    ("review_time", "Review time"),
)


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    kind: str  # an outcome, a status or a percentile: the CSS class
    label: str  # what the bar says, for its tooltip


@dataclass(frozen=True)
class Area:
    kind: str
    points: str  # SVG polygon points


@dataclass(frozen=True)
class Chart:
    bars: list
    areas: list
    ticks: list  # (x, label) along the bottom
    top: int  # the value at the top of the scale
    labels: list = ()  # (x, y, text) inside the plot
    width: int = WIDTH
    height: int = HEIGHT


def _plot_width() -> int:
    return WIDTH - LEFT - 24


def _plot_height() -> int:
    return HEIGHT - BOTTOM - TOP


def _day_bars(
    days: list[str],
    parts: Callable[[str], list[tuple[str, float]]],
    label: Callable[[str, str, float], str],
) -> Chart:
    """Stacked bars per day: `parts(day)` gives its (kind, value) parts, bottom first;
    `label(day, kind, value)` a part's tooltip. A zero draws nothing."""
    totals = [sum(value for _, value in parts(day)) for day in days]
    scale = max(totals, default=0) or 1
    slot = _plot_width() / max(len(days), 1)
    bars, ticks = [], []
    for index, day in enumerate(days):
        x = LEFT + index * slot + slot * 0.15
        base = HEIGHT - BOTTOM
        for kind, value in parts(day):
            if value:
                height = _plot_height() * value / scale
                base -= height
                bars.append(Bar(x, base, slot * 0.7, height, kind, label(day, kind, value)))
        ticks.append((x + slot * 0.35, day[5:]))
    return Chart(bars, [], _thin(ticks), scale)


def throughput(days: list[str], counts: dict) -> Chart:
    """Stacked bars per day: sessions closed, by outcome."""
    return _day_bars(
        days,
        lambda day: [(outcome, counts.get(day, {}).get(outcome, 0)) for outcome in OUTCOMES],
        lambda day, outcome, n: f"{day}: {n} {outcome}",
    )


def flow(days: list[str], counts: dict) -> Chart:
    """A cumulative flow diagram: per midnight, sessions per status, stacked (closed at
    the bottom), as areas."""
    order = list(reversed(FLOW_STATUSES))  # closed, in review, blocked, active
    totals = [sum(counts[day].get(s, 0) for s in order) for day in days]
    scale = max(totals, default=0) or 1
    step = _plot_width() / max(len(days) - 1, 1)
    xs = [LEFT + index * step for index in range(len(days))]
    below = [0] * len(days)
    areas = []
    for status in order:
        above = [b + counts[day].get(status, 0) for b, day in zip(below, days, strict=True)]

        def y(value: float) -> float:
            return HEIGHT - BOTTOM - _plot_height() * value / scale

        upper = [f"{x:.1f},{y(v):.1f}" for x, v in zip(xs, above, strict=True)]
        lower = [f"{x:.1f},{y(v):.1f}" for x, v in zip(xs, below, strict=True)][::-1]
        if len(days) == 1:  # one midnight: a band one slot wide
            upper.append(f"{xs[0] + step:.1f},{y(above[0]):.1f}")
            lower.insert(0, f"{xs[0] + step:.1f},{y(below[0]):.1f}")
        areas.append(Area(status, " ".join(upper + lower)))
        below = above
    ticks = [(x, day[5:]) for x, day in zip(xs, days, strict=True)]
    return Chart([], areas, _thin(ticks), scale)


def times(found: dict) -> Chart:
    """Horizontal bars: p50, p85 and max of the cycle, blocked and review times, each
    with its value written after it. A zero still draws a sliver, so that "0 s" is seen
    as a value and not as a bar missing; no value at all ("none") draws no bar."""
    values = [found[key][p] or 0 for key, _ in TIMES for p in ("p50", "p85", "max")]
    scale = max(values, default=0) or 1
    band = _plot_height() / len(TIMES)
    bars, labels = [], []
    for index, (key, title) in enumerate(TIMES):
        labels.append((LEFT + 4, TOP + index * band + 9, title))
        for row, percentile in enumerate(("p50", "p85", "max")):
            seconds = found[key][percentile]
            said = "none" if seconds is None else spoken_length(seconds)
            length = (_plot_width() - VALUE_ROOM) * (seconds or 0) / scale
            width = 0 if seconds is None else max(length, ZERO_BAR)
            y = TOP + 12 + index * band + row * (band - 12) / 3.2
            height = (band - 12) / 4
            bars.append(Bar(LEFT, y, width, height, percentile, f"{title} {percentile}: {said}"))
            labels.append((round(LEFT + width + 4, 1), y + height - 1, f"{percentile} {said}"))
    return Chart(bars, [], [], scale, labels)


def spend_per_day(days: list[str], by_day: dict[str, float]) -> Chart:
    """Bars per day: US dollars spent (each session on the day of its latest report)."""
    return _day_bars(
        days,
        lambda day: [("spend", by_day.get(day, 0))],
        lambda day, _, usd: f"{day}: ${usd:,.2f}",
    )


def spend_per_name(by_name: dict[str, float]) -> Chart:
    """Horizontal bars, the biggest spender first: US dollars per owner (or agent), each
    with its name and amount written beside it."""
    owners = sorted(by_name.items(), key=lambda item: (-item[1], item[0]))
    scale = max(by_name.values(), default=0) or 1
    band = 22
    bars, labels = [], []
    for index, (owner, usd) in enumerate(owners):
        y = TOP + index * band
        width = max((_plot_width() - VALUE_ROOM) * usd / scale, ZERO_BAR)
        bars.append(Bar(LEFT, y, width, band - 6, "spend", f"{owner}: ${usd:,.2f}"))
        labels.append((round(LEFT + width + 4, 1), y + band - 9, f"{owner} ${usd:,.2f}"))
    height = TOP + max(len(owners), 1) * band + BOTTOM
    return Chart(bars, [], [], scale, labels, height=height)


def _thin(ticks: list) -> list:
    """At most about ten labels along an axis."""
    every = max(1, len(ticks) // 10 + (len(ticks) % 10 > 0))
    return ticks[::every]
