"""The glob rules of docs/rules.md, "Space", sentence by sentence; then properties over
random patterns and paths."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions.domain.paths import (
    SHAPE,
    OverlapIndex,
    literal_prefix,
    matches,
    may_overlap,
    path_error,
    pattern_error,
    patterns_error,
)

# Each sentence of the rule, with cases that fail without it.
RULE = [
    # `*` matches any run of characters within one segment...
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/.py", True),
    ("src/*", "src/a/b", False),
    # ...and `?` one character within a segment.
    ("v?", "v1", True),
    ("v?", "v", False),
    ("v?", "v12", False),
    ("a?b", "a/b", False),
    # A segment `**` matches any number of whole segments, zero included.
    ("a/**/z", "a/z", True),
    ("a/**/z", "a/b/c/z", True),
    ("**", "anything/at/all", True),
    ("**/x", "y/xx", False),
    # A `**` inside a segment with other characters acts as `*`.
    ("a/**b", "a/xb", True),
    ("a/**b", "a/x/b", False),
    # Anything else matches itself, case-sensitively.
    ("Docs/a+b[1].md", "Docs/a+b[1].md", True),
    ("Docs/README.md", "docs/README.md", False),
    # A pattern with no wildcard also covers everything under it...
    ("src/billing", "src/billing", True),
    ("src/billing", "src/billing/ledger.py", True),
    ("src/billing", "src/billing.py", False),
    ("src/billing", "src", False),
    # ...a pattern with a wildcard covers only what it matches.
    ("src/bill*", "src/billing", True),
    ("src/bill*", "src/billing/x", False),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), RULE)
def test_each_sentence_of_the_glob_rule(pattern, path, expected):
    assert matches(pattern, path) is expected


def test_a_literal_prefix_is_the_segments_before_the_first_wildcard():
    assert literal_prefix("src/api/*/x") == ("src", "api")
    assert literal_prefix("src/api") == ("src", "api")
    assert literal_prefix("**/x") == ()


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("src/billing/**", "src/billing/ledger.py", True),
        ("src", "src/api/x.py", True),
        ("src/api", "src/apis", False),  # whole segments, not characters
        ("**/test_*.py", "docs", True),  # an empty prefix is everyone's prefix
        ("docs/*", "src/*", False),
    ],
)
def test_two_patterns_may_overlap_when_one_literal_prefix_leads_the_other(a, b, expected):
    assert may_overlap(a, b) is expected


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("", "1–200 characters"),
        ("x" * 201, "1–200 characters"),
        ("/src", "no leading '/'"),
        ("src//a", "empty"),
        ("src/./a", "'.'"),
        ("src/../a", "'..'"),
        ("src/", "empty"),
        (3, "text"),
    ],
)
def test_a_bad_pattern_is_refused_saying_why(pattern, says):
    assert says in pattern_error(pattern)


def test_a_node_gives_one_to_fifty_patterns():
    assert patterns_error(["a"] * 50) is None
    assert "1–50" in patterns_error(["a"] * 51)
    assert "1–50" in patterns_error([])
    assert path_error("x" * 501) is not None and path_error("src/a.py") is None


# Properties --------------------------------------------------------------------------

names = st.text("abcXY._-", min_size=1, max_size=4).filter(lambda s: s not in (".", ".."))
paths = st.lists(names, min_size=1, max_size=6).map("/".join)


@st.composite
def pattern_of(draw, path):
    """A pattern drawn from `path`, which it matches: each segment kept, widened with `*`
    or `?`, or a run of segments replaced by `**`."""
    parts, out, index = path.split("/"), [], 0
    while index < len(parts):
        choice = draw(st.sampled_from(["keep", "star", "question", "globstar"]))
        segment = parts[index]
        if choice == "globstar":
            out.append("**")
            index += draw(st.integers(0, len(parts) - index))
            continue
        if choice == "star":
            cut = draw(st.integers(0, len(segment)))
            segment = segment[:cut] + "*"
        elif choice == "question":
            at = draw(st.integers(0, len(segment) - 1))
            segment = segment[:at] + "?" + segment[at + 1 :]
        out.append(segment)
        index += 1
    return "/".join(out)


@given(st.data(), paths)
def test_a_pattern_drawn_from_a_path_matches_it(data, path):
    assert matches(data.draw(pattern_of(path)), path)


@given(paths, paths)
def test_a_pattern_without_wildcards_covers_exactly_what_is_under_it(pattern, path):
    under = path == pattern or path.startswith(pattern + "/")
    assert matches(pattern, path) is under


@given(st.data(), paths)
def test_two_patterns_that_match_one_path_may_overlap(data, path):
    a, b = data.draw(pattern_of(path)), data.draw(pattern_of(path))
    assert may_overlap(a, b) and may_overlap(b, a)


@given(paths, paths)
def test_matching_is_case_sensitive(pattern, path):
    if pattern.swapcase() != pattern:
        assert not matches(pattern.swapcase(), pattern)


patterns = st.one_of(paths, st.just("**"), paths.map(lambda p: p + "/*.py"))


@given(
    st.dictionaries(st.sampled_from("abcdef"), st.lists(patterns, min_size=1, max_size=3)), patterns
)
def test_the_overlap_index_finds_exactly_the_owners_a_pairwise_scan_finds(owned, pattern):
    pairwise = {
        owner for owner, mine in owned.items() if any(may_overlap(p, pattern) for p in mine)
    }
    assert OverlapIndex(owned).owners(pattern) == pairwise


@given(
    st.dictionaries(st.sampled_from("abcdef"), st.lists(patterns, min_size=1, max_size=3)), paths
)
def test_the_index_finds_exactly_the_owners_whose_patterns_cover_a_path(owned, path):
    covering = {owner for owner, mine in owned.items() if any(matches(p, path) for p in mine)}
    assert OverlapIndex(owned).covering(path) == covering
    among = set(list(owned)[::2])
    assert OverlapIndex(owned).covering(path, among=among) == covering & among


@given(
    st.text(st.sampled_from(["a", "b", ".", "/", "*", "\x00", "\x1f", "\x7f", "é"]), max_size=12)
)
def test_the_documented_shape_says_what_the_rules_say(text):
    allowed = path_error(text) is None if len(text) >= 1 else False
    assert bool(re.match(SHAPE, text)) is allowed


def test_patterns_with_an_empty_prefix_cost_one_walk_between_them(monkeypatch):
    # Issue 52: each `**/…` pattern of each ready node walked the whole index.
    owned = {f"n{n}": [f"**/mod{n}_{k}/*.py" for k in range(40)] for n in range(10)}
    index = OverlapIndex(owned)
    walks = []
    original = OverlapIndex._walk
    monkeypatch.setattr(OverlapIndex, "_walk", lambda self, p: walks.append(p) or original(self, p))
    for n in range(490):
        for k in range(40):
            assert index.owners(f"**/other{n}_{k}/*.ts") == set(owned)
    assert walks == [()]


def test_covering_among_some_owners_matches_only_their_patterns():
    owned = {"a": ["**/*.py"], "b": ["**/*.py"], "c": ["src/**"]}
    assert OverlapIndex(owned).covering("src/x.py", among={"b", "c"}) == {"b", "c"}
    assert OverlapIndex(owned).covering("src/x.py", among=set()) == set()
