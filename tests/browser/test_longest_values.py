"""The session page, the plan page and the board at a phone's width (390 px) and a
laptop's (1,280 px) with the longest values the tower takes — 64-character ids,
40-character commit hashes, a 500-character path, 200-character patterns, 255-character
branches, 200-character titles and repositories, 100-character agents and models, none
with a space to break at: nothing scrolls sideways (the README's promise)."""

import pytest

from sessions.domain.vocabulary import (
    BLOCK,
    MESSAGE,
    PLAN_CREATE,
    PROGRESS,
    START,
    USAGE,
    WORK,
)
from sessions.rules.append import append_event
from tests.browser.test_phone_width import sideways

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SESSION = "s" * 64
PLAN = "p" * 64
NODE = "n" * 64
COMMIT = "f" * 40
PATH = "src/" + "a" * 496
PATTERN = "src/" + "p" * 196
REPO = "o" * 99 + "/" + "r" * 100
BRANCH = "b" * 255
AGENT = "codex-" + "x" * 94
MODEL = "m" * 100
WORDLESS = "W" * 200


@pytest.fixture
def longest(alice):
    nodes = [
        {"key": NODE, "title": WORDLESS, "paths": [PATTERN]},
        {"key": "n2" + "k" * 62, "title": WORDLESS, "needs": [NODE], "budget_usd": 999999.99},
    ]
    body = {"title": WORDLESS, "repo": REPO, "nodes": nodes, "budget_usd": 1000000}
    append_event(PLAN, PLAN_CREATE, body, user=alice)
    start = {"title": WORDLESS, "plan": PLAN, "node": NODE, "agent": AGENT}
    append_event(SESSION, START, start, user=alice)
    append_event(SESSION, WORK, {"repo": REPO, "branch": BRANCH, "commit": COMMIT}, user=alice)
    append_event(SESSION, PROGRESS, {"note": f"Edit {PATH}", "paths": [PATH]}, user=alice)
    counts = {"input_tokens": 10**12, "output_tokens": 10**12}
    counts |= {"cache_read_tokens": 10**12, "cache_write_tokens": 10**12}
    append_event(SESSION, USAGE, {"model": MODEL, **counts}, user=alice)
    append_event(SESSION, MESSAGE, {"note": "M" * 2000}, user=alice)
    append_event(SESSION, BLOCK, {"reason": "R" * 2000}, user=alice)


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("path", [f"/sessions/{SESSION}/", f"/plans/{PLAN}/", "/"])
def test_the_longest_values_do_not_scroll_sideways(page_as, alice, longest, path, width):
    page = page_as(alice, path, width=width)
    assert sideways(page) == 0
