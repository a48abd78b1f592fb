"""The flow metrics' window, one definition for the API and the metrics page: its
default (the last 14 days) and its limits (not empty, at most a year and a day)."""

from datetime import UTC, date, datetime, time, timedelta

from sessions.domain import vocabulary
from sessions.rules.refusals import InvalidEvent

DEFAULT_DAYS = 14
EMPTY, TOO_LONG = "empty", "too_long"


def problem(since: datetime, until: datetime) -> str | None:
    """What is wrong with the window `[since, until)`: EMPTY, TOO_LONG, or None."""
    if not since < until:
        return EMPTY
    if until - since > vocabulary.MAX_METRICS_WINDOW:
        return TOO_LONG
    return None


def window(
    since: datetime | None, until: datetime | None, now: datetime
) -> tuple[datetime, datetime]:
    """`[since, until)` as asked, each end defaulted (until: `now`; since: DEFAULT_DAYS
    before until); `InvalidEvent` on `since` when the window is empty or too long."""
    until = until or now
    since = since or until - timedelta(days=DEFAULT_DAYS)
    found = problem(since, until)
    if found == EMPTY:
        raise InvalidEvent({"since": "must be before until"})
    if found == TOO_LONG:
        days = vocabulary.MAX_METRICS_WINDOW.days
        raise InvalidEvent({"since": f"the window may span at most {days} days"})
    return since, until


def whole_days(first: date, last: date) -> tuple[datetime, datetime]:
    """The window of whole UTC days from `first` to `last`, both included."""
    midnight = time(0, tzinfo=UTC)
    return datetime.combine(first, midnight), datetime.combine(last, midnight) + timedelta(days=1)


def default_days(today: date, first_with_data: date | None = None) -> tuple[date, date]:
    """The default window as whole days: the last DEFAULT_DAYS, today included, but
    starting no earlier than the first day with data (a new team's first days are not
    two weeks of empty charts)."""
    since = today - timedelta(days=DEFAULT_DAYS - 1)
    if first_with_data is not None and since < first_with_data <= today:
        since = first_with_data
    return since, today
