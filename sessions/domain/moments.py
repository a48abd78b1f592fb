"""Moments given as text (what a view "as of" or a metrics window accepts), and lengths of
time said for people."""

from datetime import UTC, datetime

ISO_EXAMPLE = "must be an ISO 8601 date and time, e.g. 2026-11-28T09:15:00Z"


def moment(value: object, naive_is_utc: bool = False) -> datetime:
    """A moment to view things as of, in UTC, from ISO 8601 text; in the years 2 to 9998,
    so that a window of a year either side of it is still a date. Without a UTC offset it
    is refused, or taken as UTC with `naive_is_utc` (a page's date and time input).
    Raises ValueError saying what is wrong. (Text only: pydantic would also take a
    number as seconds since 1970.)"""
    if not isinstance(value, str):
        raise ValueError(ISO_EXAMPLE)
    try:
        found = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(ISO_EXAMPLE) from None
    if found.tzinfo is None:
        if not naive_is_utc:
            raise ValueError("must have a UTC offset (e.g. Z or +02:00)")
        found = found.replace(tzinfo=UTC)
    try:
        found = found.astimezone(UTC)
    except OverflowError:
        raise ValueError("must be in the years 2 to 9998") from None
    if not 2 <= found.year <= 9998:
        raise ValueError("must be in the years 2 to 9998")
    return found


def spoken_length(seconds: float) -> str:
    """A length of time for people, compactly: `40 s`, `45 min`, `6 h`, `3 d`."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min"
    if whole < 2 * 86400:
        return f"{whole // 3600} h"
    return f"{whole // 86400} d"
