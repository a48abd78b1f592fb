"""The board's wording of ages."""

from datetime import timedelta

from django.utils import timezone

from sessions.templatetags.tower import age


def test_an_event_under_a_minute_old_happened_just_now():
    assert age(timezone.now() - timedelta(seconds=20)) == "just now"


def test_older_events_say_how_long_ago():
    assert age(timezone.now() - timedelta(minutes=5, seconds=3)) == "5\xa0minutes ago"


def test_no_time_says_nothing():
    assert age(None) == ""
