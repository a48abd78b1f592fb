"""A plan's DAG as geometry for a server-rendered SVG. Pure: no Django, no I/O.

Layered drawing, left to right (Sugiyama's scheme, kept simple):
- A node's column is one more than the deepest of its needs, so every arrow points right.
- A need that skips columns crosses each column between in a lane of its own: a slot of
  that column that no box takes, so no arrow ever runs under a box.
- Within a column, boxes and lanes are ordered by the rows of what they connect to
  (barycentre sweeps: forward, back, forward; plan order breaks ties), which keeps most
  arrows short and uncrossed.
- A box spreads the arrows it receives over its left side, and those it sends over its
  right, in the order of the rows they come from or go to: no two arrowheads meet.
- Sized for the page: columns share the width of the graph's frame in a 1,280-px window
  (`FRAME_WIDTH`) within `NODE_WIDTHS`, and a title wraps to at most `TITLE_LINES` lines,
  the last one cut with "…" only when it still does not fit (the full title is the box's
  tooltip, shows under the graph on hover and focus, and is in the node list). A wider
  plan is fitted to its frame by the stylesheet; the page's script zooms and pans it.
- Retired nodes are left out of the picture (the page lists them).

Server-rendered rather than drawn by a JavaScript layout library: the page stays one
request with no script to load, the graph shows without JavaScript, and the layout of a
500-node plan takes a few tens of milliseconds, a third of its page (bench/plan_page.py).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import NamedTuple

from sessions.domain import plans

FRAME_WIDTH = 1200  # the graph's frame in a 1,280-px window is 1,209 px wide
NODE_WIDTHS = (136, 220)  # a box's narrowest and widest
COLUMN_GAP = 36
ROW_GAP = 14
LANE_HEIGHT = 8  # the slot an arrow crossing a column takes in it
MARGIN = 12
HEAD_ROOM = 7  # an arrow ends this short of its box: the head's length
# A bold 12-px title's average character is narrower than this: wrapping errs short.
CHAR_WIDTH = 7.2
TEXT_LEFT = 8
TITLE_LINES = 3
LINE_HEIGHT = 15
FIRST_BASELINE = 19
SUB_HEIGHT = 22  # the state line under the title


class Box(NamedTuple):  # not a dataclass: a tuple is cheaper to make, 500 at a time
    key: str
    title: str
    lines: tuple[str, ...]  # the title as it fits the box
    state: str
    session: str | None
    critical: bool
    needs: tuple[str, ...]  # the keys of its live needs
    x: int
    y: int


class Arrow(NamedTuple):
    need: str
    node: str
    path: str  # SVG path data
    critical: bool


@dataclass(frozen=True)
class Drawing:
    boxes: list[Box]
    arrows: list[Arrow]
    width: int
    height: int
    box_width: int
    box_height: int
    line_ys: tuple[int, ...]  # the baseline of each title line, in a box
    sub_y: int  # the baseline of the state line
    text_x: int = TEXT_LEFT  # where every text line of a box begins


class _Lane:
    """The slot an arrow takes in a column it crosses (hashed by identity: cheap)."""

    __slots__ = ()


# An item of a column: a node's key, or a lane.
Item = str | _Lane


@dataclass
class _Layout:
    columns: list[list[Item]]
    lanes: dict[tuple[str, str], list[_Lane]]  # each arrow's, left to right
    before: dict[Item, list[Item]]  # what each item connects to in the column before
    after: dict[Item, list[Item]]  # and in the column after


def _column_of(view: plans.PlanView, live: dict[str, plans.NodeView]) -> dict[str, int]:
    column: dict[str, int] = {}
    for key in plans.topological_keys(view):  # needs first
        if key in live:
            needs = [column[n] for n in live[key].needs if n in column]
            column[key] = 1 + max(needs, default=-1)
    return column


def _lay_out(view: plans.PlanView, live: dict[str, plans.NodeView]) -> _Layout:
    column = _column_of(view, live)
    columns: list[list[Item]] = [[] for _ in range(max(column.values(), default=-1) + 1)]
    for key in live:  # plan order within each column, to begin with
        columns[column[key]].append(key)
    before: dict[Item, list[Item]] = {}
    after: dict[Item, list[Item]] = {}
    lanes: dict[tuple[str, str], list[_Lane]] = {}
    for key, node in live.items():
        for need in node.needs:
            if need not in live:
                continue
            crossing = lanes[need, key] = []
            for crossed in range(column[need] + 1, column[key]):
                lane = _Lane()
                columns[crossed].append(lane)
                crossing.append(lane)
            chain: list[Item] = [need, *crossing, key]
            for left, right in pairwise(chain):
                after.setdefault(left, []).append(right)
                before.setdefault(right, []).append(left)
    layout = _Layout(columns, lanes, before, after)
    _order(layout)
    return layout


def _order(layout: _Layout) -> None:
    """Barycentre sweeps: each column sorted by the mean row of what its items connect
    to in the column just swept, their current row breaking ties."""
    row: dict[Item, int] = {}
    for items in layout.columns:
        row.update((item, index) for index, item in enumerate(items))
    count = len(layout.columns)
    sweeps = (
        (range(1, count), layout.before),
        (range(count - 2, -1, -1), layout.after),
        (range(1, count), layout.before),
    )
    for indices, neighbours in sweeps:
        for index in indices:
            items = layout.columns[index]

            def centre(item: Item, neighbours: dict = neighbours) -> tuple[float, int]:
                rows = [row[n] for n in neighbours.get(item, ())]
                return (sum(rows) / len(rows) if rows else row[item], row[item])

            items.sort(key=centre)
            row.update((item, position) for position, item in enumerate(items))


def _wrap(title: str, width: int) -> tuple[str, ...]:
    """`title` in lines of at most `width` characters, broken at spaces (a word longer
    than a line is cut across lines), at most `TITLE_LINES` of them: when more would be
    needed, the last one ends in "…". (`textwrap` does the same at a fifth of the speed,
    which a 500-node plan felt.)"""
    if len(title) <= width:
        return (title,)
    lines: list[str] = []
    line = ""
    for word in title.split():
        while len(word) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:width])
            word = word[width:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    if len(lines) > TITLE_LINES:
        last = lines[TITLE_LINES - 1]
        lines[TITLE_LINES - 1] = last[: width - 1].rstrip() + "…"
    return tuple(lines[:TITLE_LINES]) or ("",)


def _box_width(columns: int) -> int:
    room = FRAME_WIDTH - 2 * MARGIN - max(columns - 1, 0) * COLUMN_GAP
    narrowest, widest = NODE_WIDTHS
    return max(narrowest, min(widest, room // max(columns, 1)))


def _curve(x0: int, y0: int, x1: int, y1: int) -> str:
    """A curve across a gap between columns, level at both ends."""
    middle = (x0 + x1) // 2
    return f"C{middle},{y0} {middle},{y1} {x1},{y1}"


def _spread(top: int, height: int, count: int) -> list[int]:
    """`count` points spread evenly down a box's side (whole pixels: apart while a box
    takes fewer arrows on a side than it is pixels tall)."""
    return [top + height * (index + 1) // (count + 1) for index in range(count)]


def draw(view: plans.PlanView) -> Drawing:
    live = {node.key: node for node in view.nodes if node.state != plans.RETIRED}
    layout = _lay_out(view, live)
    box_width = _box_width(len(layout.columns))
    characters = max(int((box_width - 2 * TEXT_LEFT) // CHAR_WIDTH), 4)
    lines = {key: _wrap(node.title, characters) for key, node in live.items()}
    title_lines = max((len(found) for found in lines.values()), default=1)
    box_height = FIRST_BASELINE + (title_lines - 1) * LINE_HEIGHT + SUB_HEIGHT
    sub_y = box_height - 8

    # Where each item sits: a box's top, a lane's middle; and the middle of each.
    x_of: dict[Item, int] = {}
    y_of: dict[Item, int] = {}
    middle: dict[Item, int] = {}
    height = 2 * MARGIN  # an empty plan's
    for index, items in enumerate(layout.columns):
        x = MARGIN + index * (box_width + COLUMN_GAP)
        y = MARGIN
        for item in items:
            x_of[item] = x
            if isinstance(item, str):
                y_of[item] = y
                middle[item] = y + box_height // 2
                y += box_height + ROW_GAP
            else:
                y_of[item] = middle[item] = y + LANE_HEIGHT // 2
                y += LANE_HEIGHT + ROW_GAP
        height = max(height, y - ROW_GAP + MARGIN)

    def ports(neighbours: Iterable[Item], key: str) -> dict[Item, int]:
        ordered = sorted(neighbours, key=middle.__getitem__)
        return dict(zip(ordered, _spread(y_of[key], box_height, len(ordered)), strict=True))

    outgoing = {key: ports(layout.after.get(key, ()), key) for key in live}
    incoming = {key: ports(layout.before.get(key, ()), key) for key in live}

    critical = set(view.critical_path)
    critical_edges = set(pairwise(view.critical_path))
    boxes = [
        Box(
            key,
            node.title,
            lines[key],
            node.state,
            node.session,
            key in critical,
            tuple(need for need in node.needs if need in live),
            x_of[key],
            y_of[key],
        )
        for key, node in live.items()
    ]
    boxes.sort(key=lambda box: (box.x, box.y))  # reading order: column by column
    arrows = []
    for (need, key), lanes in layout.lanes.items():  # one entry per need between live nodes
        x, y = x_of[need] + box_width, outgoing[need][lanes[0] if lanes else key]
        path = [f"M{x},{y}"]
        for lane in lanes:
            lane_y = y_of[lane]
            path.append(_curve(x, y, x_of[lane], lane_y))
            x, y = x_of[lane] + box_width, lane_y
            path.append(f"L{x},{y}")
        end = incoming[key][lanes[-1] if lanes else need]
        path.append(_curve(x, y, x_of[key] - HEAD_ROOM, end))
        arrows.append(Arrow(need, key, " ".join(path), (need, key) in critical_edges))
    count = len(layout.columns)
    return Drawing(
        boxes,
        arrows,
        width=2 * MARGIN + count * box_width + max(count - 1, 0) * COLUMN_GAP,
        height=height,
        box_width=box_width,
        box_height=box_height,
        line_ys=tuple(FIRST_BASELINE + index * LINE_HEIGHT for index in range(title_lines)),
        sub_y=sub_y,
    )
