"""The board's wording of ages, and its line of where the work lands."""

from datetime import UTC, datetime, timedelta
from datetime import timezone as dt_timezone

from django.utils import timezone

from sessions.domain.work import Checks, PullRequest, Work
from sessions.templatetags.tower import age, utc_moment, work_line


def test_an_event_under_a_minute_old_happened_just_now():
    assert age(timezone.now() - timedelta(seconds=20)) == "just now"


def test_older_events_say_how_long_ago():
    assert age(timezone.now() - timedelta(minutes=5, seconds=3)) == "5\xa0minutes ago"


def test_no_time_says_nothing():
    assert age(None) == ""


def test_a_whole_second_is_shown_without_a_fraction():
    moment = datetime(2026, 3, 1, 9, 0, 7, tzinfo=UTC)
    assert utc_moment(moment).endswith(">2026-03-01 09:00:07</time>")


def test_a_moment_is_shown_in_utc_to_the_microsecond_with_its_iso_form():
    moment = datetime(2026, 3, 1, 10, 0, 7, 13, tzinfo=dt_timezone(timedelta(hours=1)))
    assert utc_moment(moment) == (
        '<time datetime="2026-03-01T09:00:07.000013+00:00">2026-03-01 09:00:07.000013</time>'
    )


def test_an_age_counts_from_the_moment_given():
    then = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    assert age(then, then + timedelta(hours=3)) == "3\xa0hours ago"
    assert age(then, then + timedelta(seconds=30)) == "just now"


def test_a_work_line_names_branch_pull_request_and_checks():
    checks = Checks("c0ffee", "failure", {"ci/test": "failure", "lint": "success"})
    pr = PullRequest(94, None, "open")
    line = work_line(Work("acme/shop", "fix-login", "c0ffee", pr, checks))
    assert '<span class="branch" title="acme/shop"><code>fix-login</code></span>' in line
    assert '<span class="pr">PR #94</span> <span class="badge pr-open">open</span>' in line
    assert 'title="ci/test: failure, lint: success">✗</span>' in line


def test_a_work_line_escapes_every_text():
    url = 'https://github.com/a/b/pull/1"><script>'
    checks = Checks("c0ffee", "pending", {"<b>build</b>": "pending"})
    line = work_line(Work("<i>r</i>", "<b>", None, PullRequest(1, url, None), checks))
    assert "<script>" not in line and "<b>" not in line and "<i>" not in line
    assert "&lt;b&gt;build&lt;/b&gt;: pending" in line


def test_no_work_says_nothing():
    assert work_line(None) == ""
