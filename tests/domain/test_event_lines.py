"""What a timeline row says of an event with no note (`domain.event_lines`): where the
work landed, what was spent, which paths were written."""

from datetime import UTC, datetime

from sessions.domain.event_lines import event_line
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import PROGRESS, START, USAGE, WORK

AT = datetime(2026, 12, 5, tzinfo=UTC)
COMMIT = "ef1d19" + "a" * 34


def event(kind, **fields):
    return EventRecord("s", 2, kind, AT, "alice", **fields)


def test_a_pull_request_opened_on_a_branch():
    said = event_line(event(WORK, pr=94, pr_state="open", branch="fix-login", repo="acme/shop"))
    assert said == "PR #94 opened, on fix-login of acme/shop"


def test_a_check_names_its_result_and_commit():
    said = event_line(event(WORK, check="linter", check_state="success", commit=COMMIT))
    assert said == "checks: linter ✓ at ef1d19aaaaaa…"


def test_a_merge_and_a_failed_check_read_as_such():
    assert event_line(event(WORK, pr=7, pr_state="merged")) == "PR #7 merged"
    failed = event(WORK, check="tests", check_state="failure", commit=COMMIT)
    assert "tests ✗" in event_line(failed)


def test_usage_says_the_model_and_its_tokens_so_far():
    said = event_line(event(USAGE, model="opus-5-5", input_tokens=40, output_tokens=20))
    assert said == "opus-5-5: 40 in, 20 out (so far)"
    cached = event(USAGE, model="m", input_tokens=1, output_tokens=2, cache_read_tokens=1000)
    assert "1,000 read from cache" in event_line(cached)


def test_a_heartbeat_names_the_paths_it_wrote_the_first_five_then_a_count():
    paths = [f"src/{n}.py" for n in "abcdefg"]
    said = event_line(event(PROGRESS, paths=paths))
    assert said == "wrote src/a.py, src/b.py, src/c.py, src/d.py, src/e.py and 2 more"


def test_an_event_whose_note_says_it_all_adds_nothing():
    assert event_line(event(START, title="Fix the login")) == ""
    assert event_line(event(PROGRESS, note="editing")) == ""
