"""v4's path cases (docs/rules.md, "Space"): what `matches(pattern, path)` and
`may_overlap(a, b)` must answer, computed by an independent reference — for the tower's
glob rules, which `ct`'s hooks share (`ct.globs`)."""

import json

import pytest

from sessions.domain.paths import matches, may_overlap
from tests.conftest import CONFORMANCE

CASES = json.loads((CONFORMANCE / "v4" / "paths.json").read_text())


@pytest.mark.parametrize(
    "case", CASES["matches"], ids=lambda case: f"{case['pattern']} ~ {case['path']}"
)
def test_matches_answers_as_the_reference(case):
    assert matches(case["pattern"], case["path"]) is case["matches"]


@pytest.mark.parametrize(
    "case", CASES["may_overlap"], ids=lambda case: f"{case['a']} ~ {case['b']}"
)
def test_may_overlap_answers_as_the_reference(case):
    assert may_overlap(case["a"], case["b"]) is case["overlap"]
    assert may_overlap(case["b"], case["a"]) is case["overlap"]
