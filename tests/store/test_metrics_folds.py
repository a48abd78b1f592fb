"""The flow metrics folded in SQL (`flow_model.metrics`) equal the pure reference
(`metrics.metrics` over the same sessions' whole streams), on either database."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions import store
from sessions.domain import metrics
from sessions.domain.vocabulary import ALLOWED_FROM, OUTCOMES, STATUS_AFTER
from sessions.models import Event
from sessions.readmodels import flow as flow_model

pytestmark = pytest.mark.django_db

# Two eras: today's, and around 1970, where moments before the epoch are negative.
ERAS = [datetime(2026, 11, 20, 7, tzinfo=UTC), datetime(1969, 12, 30, 18, 0, tzinfo=UTC)]
AFTER_START = [kind for kind in ALLOWED_FROM if None not in ALLOWED_FROM[kind]]
HOUR = 3_600_000_000  # microseconds


def microseconds(hours):
    """Up to `hours` of microseconds; often whole hours, so that moments fall on midnights
    (where "as of" includes the moment itself)."""
    return st.one_of(st.integers(0, hours).map(lambda h: h * HOUR), st.integers(0, hours * HOUR))


@st.composite
def session_steps(draw):
    """A stream the transition rules allow: (type, moment, outcome) from its start."""
    moment = draw(st.sampled_from(ERAS)) + timedelta(microseconds=draw(microseconds(96)))
    steps, status = [("session_start", moment, None)], STATUS_AFTER["session_start"]
    for _ in range(draw(st.integers(0, 7))):
        allowed = [kind for kind in AFTER_START if status in ALLOWED_FROM[kind]]
        kind = draw(st.sampled_from(allowed))
        moment += timedelta(microseconds=draw(microseconds(48)))
        outcome = draw(st.sampled_from([None, *OUTCOMES])) if kind == "session_close" else None
        steps.append((kind, moment, outcome))
        status = STATUS_AFTER.get(kind, status)  # progress and messages keep it
        if kind == "session_close":
            break
    return steps


def stored(histories):
    Event.objects.bulk_create(
        Event(
            session=f"s{n}",
            seq=seq,
            type=kind,
            timestamp=moment,
            actor="a",
            title="T" if kind == "session_start" else None,
            reason="r" if kind == "session_block" else None,
            note="m" if kind == "session_message" else None,
            outcome=outcome,
        )
        for n, steps in enumerate(histories)
        for seq, (kind, moment, outcome) in enumerate(steps, start=1)
    )


class Discard(Exception):
    """Leaves an example's transaction, so the next starts from an empty table."""


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(session_steps(), max_size=8),
    st.sampled_from(ERAS),
    microseconds(72),
    microseconds(96).map(lambda length: length or 1),
)
def test_the_folds_in_sql_equal_the_pure_metrics(histories, era, offset, length):
    since = era + timedelta(microseconds=offset)
    until = since + timedelta(microseconds=length)
    try:
        with transaction.atomic():
            stored(histories)
            streams = store.read_streams([f"s{n}" for n in range(len(histories))]).values()
            closed_before = store.closed_before(since)
            alive = [events for events in streams if not closed_before_since(events, since)]
            assert flow_model.metrics(since, until) == metrics.metrics(
                alive, since, until, closed_before
            )
            raise Discard
    except Discard:
        pass


def closed_before_since(events, since):
    return events[-1].type == "session_close" and events[-1].timestamp < since


def test_an_empty_window_has_no_throughput_and_a_flow_of_zeros(db):
    since = ERAS[0]
    found = flow_model.metrics(since, since + timedelta(days=2))
    assert found["throughput"] == {} and found["cycle_time"]["p50"] is None
    assert list(found["flow"].values()) == [dict.fromkeys(metrics.FLOW_STATUSES, 0)] * 2


def test_a_session_started_at_midnight_counts_in_that_midnight_s_flow(db):
    midnight = datetime(2026, 11, 21, tzinfo=UTC)
    stored([[("session_start", midnight, None)]])
    found = flow_model.metrics(midnight - timedelta(hours=1), midnight + timedelta(hours=1))
    assert found["flow"] == {"2026-11-21": {"active": 1, "blocked": 0, "in_review": 0, "closed": 0}}


def test_a_session_closed_at_the_window_s_first_moment_is_closed_in_it(db):
    since = datetime(2026, 11, 21, 9, tzinfo=UTC)
    stored([[("session_start", since, None), ("session_close", since, None)]])
    found = flow_model.metrics(since, since + timedelta(hours=1))
    day = {"done": 1, "failed": 0, "abandoned": 0, "lapsed": 0, "released": 0}
    assert found["throughput"] == {"2026-11-21": day}
