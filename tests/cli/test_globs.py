"""The glob matcher (`ct.globs`, which the tower imports): it answers as a simple
reference does, and its work is bounded by the pattern's length times the path's whatever
the pattern, where a backtracking regular expression took minutes (issue 52: one
reservation `**/*?*?…*Z` hung every agent's write check in its repository)."""

import ast
import re
import sys
from pathlib import Path

import pytest
from ct import globs
from hypothesis import given, settings
from hypothesis import strategies as st

from sessions.domain import paths


def reference_segment(pattern: str, text: str) -> bool:
    """One segment by a regular expression: fine for the small cases of the property."""
    wild = {"*": "[^/]*", "?": "[^/]"}
    regex = "".join(wild.get(char) or re.escape(char) for char in pattern)
    return re.fullmatch(regex, text) is not None


def reference_segments(pattern: list[str], path: list[str]) -> bool:
    """Every way a `**` may take whole segments, tried one by one."""
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(reference_segments(rest, path[i:]) for i in range(len(path) + 1))
    return bool(path) and reference_segment(head, path[0]) and reference_segments(rest, path[1:])


def reference(pattern: str, path: str) -> bool:
    wanted, given_ = pattern.split("/"), path.split("/")
    if "*" not in pattern and "?" not in pattern:
        return given_[: len(wanted)] == wanted
    return reference_segments(wanted, given_)


pattern_segments = st.one_of(st.just("**"), st.text("ab*?", min_size=1, max_size=6))
small_patterns = st.lists(pattern_segments, min_size=1, max_size=4).map("/".join)
small_paths = st.lists(st.text("ab*", min_size=1, max_size=6), min_size=1, max_size=4).map("/".join)


@given(small_patterns, small_paths)
def test_the_matcher_answers_as_the_reference(pattern, path):
    assert globs.matches(pattern, path) is reference(pattern, path)


@given(st.text("ab*?", min_size=1, max_size=10), st.text("ab", max_size=12))
def test_a_segment_matches_as_the_reference(pattern, text):
    assert globs.segment_matches(pattern, text) is reference_segment(pattern, text)


def test_the_tower_matches_by_the_clients_glob_rules():
    assert paths.matches is globs.matches


def test_the_matcher_builds_no_regular_expression():
    tree = ast.parse(Path(globs.__file__).read_text())
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "re" not in imported


def lines_run(pattern: str, path: str) -> int:
    """The lines of Python run to match: the work done, whatever the machine's speed (the
    module runs no regular expression, so nothing runs unseen in C but linear scans)."""
    count = 0

    def trace(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        globs.matches(pattern, path)
    finally:
        sys.settrace(None)
    return count


def bound(pattern: str, path: str) -> int:
    """The work allowed: a fixed cost (the calls themselves), then at most a few lines
    per character of the pattern per character of the path."""
    return 64 + 8 * (len(pattern) + 1) * (len(path) + 1)


ADVERSARIAL = [
    ("**/" + "*?" * 16 + "*Z", "a/" + "b" * 200 + "/" + "c" * 280),
    ("*a*a*a*a*a*a*a*a*b", "a" * 50),
    ("*" + "a?" * 30 + "b", "a" * 499),
    ("*" + "a?" * 30 + "b*", "a" * 499),
    ("**/" * 60 + "x", "/".join("y" * 249)),
    ("*" * 199 + "b", "a" * 500),
]


@pytest.mark.parametrize(("pattern", "path"), ADVERSARIAL, ids=lambda text: text[:24])
def test_an_adversarial_pattern_costs_at_most_its_length_times_the_paths(pattern, path):
    assert lines_run(pattern, path) <= bound(pattern, path)


def test_the_issues_pattern_is_decided_in_a_few_thousand_lines():
    pattern, path = ADVERSARIAL[0]
    assert not globs.matches(pattern, path)
    assert lines_run(pattern, path) < 3_000


@settings(max_examples=60, deadline=None)
@given(
    st.text("*?a", min_size=1, max_size=200),
    st.integers(1, 499),
    st.sampled_from(["a", "b", "/"]),
)
def test_random_adversarial_patterns_cost_at_most_their_length_times_the_paths(
    pattern, length, last
):
    path = "a" * length + last if last != "/" else "a" * length
    assert lines_run(pattern, path) <= bound(pattern, path)
