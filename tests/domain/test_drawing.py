"""The plan's drawing (sessions.web.drawing): pure geometry, checked on any DAG.

What a person reading the graph relies on: every box apart, every arrow pointing right
and never passing under a box, no two arrowheads on one point, a 7-column plan inside
the frame of a 1,280-px window at full size, and titles whole wherever they fit.
"""

import re
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from sessions.domain import plans
from sessions.web import drawing


def view_of(needs: dict[str, list[str]], titles: dict[str, str] | None = None) -> plans.PlanView:
    titles = titles or {}
    nodes = [
        plans.NodeView(key, titles.get(key, f"Task {key}"), tuple(found), "waiting", None)
        for key, found in needs.items()
    ]
    return plans.PlanView(
        id="p", title="P", owner="alice", note=None, status="open", seq=1, created_at=None,
        last_event_at=None, nodes=nodes, ready=[], critical_path=[], done=0,
        total=len(nodes), counts={},
    )  # fmt: skip


@st.composite
def dags(draw, max_size=30):
    size = draw(st.integers(min_value=1, max_value=max_size))
    keys = [f"k{index}" for index in range(size)]
    needs = {}
    for index, key in enumerate(keys):
        earlier = keys[:index]
        needs[key] = (
            draw(st.lists(st.sampled_from(earlier), unique=True, max_size=4)) if earlier else []
        )
    order = draw(st.permutations(keys))  # plan order is not the dependency order
    return {key: needs[key] for key in order}


NUMBER = r"-?\d+(?:\.\d+)?"


def points_along(path: str, steps: int = 24) -> list[tuple[float, float]]:
    """Points along the path data the drawing writes (M, then C and L segments)."""
    found: list[tuple[float, float]] = []
    for command, numbers in re.findall(r"([MCL])([^MCL]*)", path):
        values = [float(n) for n in re.findall(NUMBER, numbers)]
        pairs = list(zip(values[::2], values[1::2], strict=True))
        if command == "M":
            found.append(pairs[0])
        elif command == "L":
            start, end = found[-1], pairs[0]
            found += [
                (
                    start[0] + (end[0] - start[0]) * t / steps,
                    start[1] + (end[1] - start[1]) * t / steps,
                )
                for t in range(1, steps + 1)
            ]
        else:
            (x0, y0), ((x1, y1), (x2, y2), (x3, y3)) = found[-1], pairs
            for step in range(1, steps + 1):
                t = step / steps
                a, b, c, d = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t**2, t**3
                found.append((a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3))
    return found


def inside(point: tuple[float, float], box: drawing.Box, found: drawing.Drawing) -> bool:
    x, y = point
    return (
        box.x + 0.5 < x < box.x + found.box_width - 0.5
        and box.y + 0.5 < y < box.y + found.box_height - 0.5
    )


@settings(max_examples=60, deadline=None)
@given(dags())
def test_no_two_boxes_overlap(needs):
    found = drawing.draw(view_of(needs))
    width, height = found.box_width, found.box_height
    for index, a in enumerate(found.boxes):
        for b in found.boxes[index + 1 :]:
            assert (
                a.x + width <= b.x
                or b.x + width <= a.x
                or a.y + height <= b.y
                or b.y + height <= a.y
            )


@settings(max_examples=60, deadline=None)
@given(dags())
def test_every_arrow_points_right_and_never_runs_under_a_box(needs):
    found = drawing.draw(view_of(needs))
    for arrow in found.arrows:
        points = points_along(arrow.path)
        assert points[-1][0] > points[0][0]
        assert all(later[0] >= earlier[0] - 1e-6 for earlier, later in pairwise(points))
        assert not any(inside(point, box, found) for point in points for box in found.boxes)


@settings(max_examples=60, deadline=None)
@given(dags())
def test_no_two_arrows_end_at_the_same_point(needs):
    ends = [points_along(arrow.path)[-1] for arrow in drawing.draw(view_of(needs)).arrows]
    assert len(ends) == len(set(ends))


@settings(max_examples=60, deadline=None)
@given(dags())
def test_each_arrow_leaves_its_need_and_reaches_its_node(needs):
    found = drawing.draw(view_of(needs))
    box = {b.key: b for b in found.boxes}
    for arrow in found.arrows:
        points = points_along(arrow.path)
        need, node = box[arrow.need], box[arrow.node]
        assert points[0][0] == need.x + found.box_width
        assert need.y < points[0][1] < need.y + found.box_height
        assert node.x - drawing.HEAD_ROOM == points[-1][0]
        assert node.y < points[-1][1] < node.y + found.box_height
    assert len(found.arrows) == sum(len(found_needs) for found_needs in needs.values())


def chain(length: int) -> dict[str, list[str]]:
    return {f"n{i}": [f"n{i - 1}"] if i else [] for i in range(length)}


def test_seven_columns_fit_the_frame_of_a_1280_px_window_at_full_size():
    found = drawing.draw(view_of(chain(7)))
    assert len({box.x for box in found.boxes}) == 7
    assert found.width <= drawing.FRAME_WIDTH


def test_a_short_plan_gets_wide_boxes_and_a_long_one_the_narrowest():
    assert drawing.draw(view_of(chain(2))).box_width == drawing.NODE_WIDTHS[1]
    assert drawing.draw(view_of(chain(20))).box_width == drawing.NODE_WIDTHS[0]


def test_a_title_wraps_whole_onto_lines_that_fit_the_box():
    title = "Staged rollout to 10% of all traffic"
    found = drawing.draw(view_of(chain(7), {"n3": title}))
    box = next(b for b in found.boxes if b.key == "n3")
    assert " ".join(box.lines) == title
    room = (found.box_width - 2 * drawing.TEXT_LEFT) / drawing.CHAR_WIDTH
    assert all(len(line) <= room for line in box.lines)
    assert len(found.line_ys) == len(box.lines)


def test_a_title_too_long_for_its_lines_ends_in_an_ellipsis_and_keeps_its_full_title():
    title = " ".join(["word"] * 60)
    box = drawing.draw(view_of({"a": []}, {"a": title})).boxes[0]
    assert len(box.lines) == drawing.TITLE_LINES
    assert box.lines[-1].endswith("…")
    assert box.title == title


def test_boxes_are_as_tall_as_the_longest_title_needs():
    short = drawing.draw(view_of({"a": [], "b": []}))
    longer = drawing.draw(view_of({"a": [], "b": []}, {"b": " ".join(["word"] * 12)}))
    assert len(short.line_ys) == 1
    assert longer.box_height > short.box_height


def test_a_need_that_skips_columns_passes_them_in_a_lane_between_boxes():
    # d needs a (column 0) and c (column 2): the arrow a → d crosses columns 1 and 2.
    found = drawing.draw(view_of({"a": [], "b": ["a"], "c": ["b"], "d": ["a", "c"]}))
    arrow = next(a for a in found.arrows if (a.need, a.node) == ("a", "d"))
    assert arrow.path.count("L") == 2
    assert not any(
        inside(point, box, found) for point in points_along(arrow.path) for box in found.boxes
    )


def test_retired_nodes_are_left_out_and_so_are_needs_on_them():
    view = view_of({"a": [], "b": ["a"]})
    retired = plans.NodeView("a", "A", (), plans.RETIRED, None)
    view = view.__class__(**{**view.__dict__, "nodes": [retired, view.nodes[1]]})
    found = drawing.draw(view)
    assert [box.key for box in found.boxes] == ["b"]
    assert found.arrows == [] and found.boxes[0].needs == ()


def test_the_critical_path_marks_its_boxes_and_arrows():
    view = view_of(chain(3))
    view = view.__class__(**{**view.__dict__, "critical_path": ["n0", "n1", "n2"]})
    found = drawing.draw(view)
    assert all(box.critical for box in found.boxes)
    assert all(arrow.critical for arrow in found.arrows)


def test_an_empty_plan_draws_nothing():
    found = drawing.draw(view_of({}))
    assert found.boxes == [] and found.arrows == []
    assert found.width == found.height == 2 * drawing.MARGIN
