"""Flow metrics over a window of time, from sessions' events. Pure: no Django, no I/O
(docs/rules.md, "Time and attention").

Over `[since, until)`: the sessions closed in the window give the throughput per UTC day
by outcome, and their cycle, blocked and review times as nearest-rank percentiles; every
UTC midnight in the window gives the cumulative flow, each session's status as of that
instant.
"""

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import date, datetime, time, timedelta
from typing import NamedTuple

from sessions.domain import projections
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import (
    ACTIVE,
    BLOCKED,
    CLOSED,
    DONE,
    IN_REVIEW,
    OUTCOMES,
    STATUS_AFTER,
)

FLOW_STATUSES = (ACTIVE, BLOCKED, IN_REVIEW, CLOSED)
PERCENTILES = {"p50": 50, "p85": 85}


def nearest_rank(values: Sequence[int]) -> dict:
    """p50, p85 and max of whole seconds by nearest rank: the value at position
    ⌈p·n/100⌉ of the sorted list; null when there are none."""
    ordered = sorted(values)
    if not ordered:
        return {name: None for name in (*PERCENTILES, "max")}
    found = {
        name: ordered[math.ceil(p * len(ordered) / 100) - 1] for name, p in PERCENTILES.items()
    }
    return {**found, "max": ordered[-1]}


def midnights(since: datetime, until: datetime) -> list[datetime]:
    """Every UTC midnight in `[since, until)`."""
    first = datetime.combine(since.date(), time(0), since.tzinfo)
    if first < since:
        first += timedelta(days=1)
    days = []
    while first < until:
        days.append(first)
        first += timedelta(days=1)
    return days


def _count_flow(events: Sequence[EventRecord], days: list[datetime], flow: dict) -> None:
    """Add one session's status at each midnight (as of it) to `flow`: one walk of its
    events, `projections.status` of each prefix."""
    current, index = None, 0
    for day in days:
        while index < len(events) and events[index].timestamp <= day:
            current = projections.status(events[index : index + 1]) or current
            index += 1
        if current is not None:
            flow[day][current] += 1


def _metrics_of(
    since: datetime,
    until: datetime,
    throughput: dict[str, dict[str, int]],
    cycle: list[int],
    blocked: list[int],
    review: list[int],
    flow: dict,
) -> dict:
    return {
        "since": since,
        "until": until,
        "throughput": dict(sorted(throughput.items())),
        "cycle_time": nearest_rank(cycle),
        "blocked_time": nearest_rank(blocked),
        "review_time": nearest_rank(review),
        "flow": {day.date().isoformat(): counts for day, counts in flow.items()},
    }


def metrics(
    streams: Iterable[Sequence[EventRecord]],
    since: datetime,
    until: datetime,
    closed_before: int = 0,
) -> dict:
    """The metrics of the window from the sessions' streams (each in stream order).

    `streams` must hold every session that was open at some moment of the window or
    closed in it; `closed_before` counts the sessions closed before `since`, which are
    closed at every midnight of the window and need not be read.
    """
    days = midnights(since, until)
    throughput: dict[str, dict[str, int]] = {}
    cycle, blocked, review = [], [], []
    flow = {day: dict.fromkeys(FLOW_STATUSES, 0) for day in days}
    for day in days:
        flow[day][CLOSED] = closed_before
    for events in streams:
        closed_at = projections.closed_at(events)
        if closed_at is not None and since <= closed_at < until:
            label = closed_at.date().isoformat()
            counts = throughput.setdefault(label, dict.fromkeys(OUTCOMES, 0))
            counts[projections.outcome(events) or DONE] += 1  # (a closed one has an outcome)
            opened = projections.opened_at(events) or closed_at  # (and a start)
            cycle.append(int((closed_at - opened).total_seconds()))
            spent = projections.time_in_state(events, closed_at)
            blocked.append(spent[BLOCKED])
            review.append(spent[IN_REVIEW])
        _count_flow(events, days, flow)
    return _metrics_of(since, until, throughput, cycle, blocked, review, flow)


EPOCH_DAY = date(1970, 1, 1)
_LAST_DAY = (date.max - EPOCH_DAY).days


class ClosedInWindow(NamedTuple):
    """The sessions closed in a window, folded: how many per (day number since
    1970-01-01 of the close, outcome), and each one's whole seconds from start to close,
    blocked and in review (for the percentiles)."""

    per_day: Counter
    cycle: list[int]
    blocked: list[int]
    review: list[int]


def metrics_from_folds(
    since: datetime,
    until: datetime,
    closed: ClosedInWindow,
    status_changes: Iterable[tuple[str, int, int]],
    closed_before: int = 0,
) -> dict:
    """`metrics` from the folds a database computes over the same sessions, so that
    their events need not be loaded (`store.flow_folds`): `closed`, and the
    `status_changes` as (event type, day number since 1970-01-01, change), where each
    event counts +1 for the status it leaves from the first midnight at or after it,
    and -1 from the first midnight at or after the next event of its stream.
    """
    throughput: dict[str, dict[str, int]] = {}
    for (day, outcome), count in closed.per_day.items():
        label = (EPOCH_DAY + timedelta(days=day)).isoformat()
        throughput.setdefault(label, dict.fromkeys(OUTCOMES, 0))[outcome] = count
    days = midnights(since, until)
    # A change from a midnight past the calendar's last day (an event on 9999-12-31)
    # reaches no midnight of any window: it is left out rather than overflow the date.
    changes = sorted(
        (EPOCH_DAY + timedelta(days=day), STATUS_AFTER[kind], change)
        for kind, day, change in status_changes
        if day <= _LAST_DAY
    )
    counts = dict.fromkeys(FLOW_STATUSES, 0)
    counts[CLOSED] = closed_before
    flow, index = {}, 0
    for day in days:
        while index < len(changes) and changes[index][0] <= day.date():
            counts[changes[index][1]] += changes[index][2]
            index += 1
        flow[day] = dict(counts)
    return _metrics_of(since, until, throughput, closed.cycle, closed.blocked, closed.review, flow)
