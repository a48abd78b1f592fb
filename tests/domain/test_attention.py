"""The one rule of attention (`domain.attention.decide`): its kinds in their order of
precedence, as properties over any facts."""

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from sessions.domain.attention import KINDS, Facts, decide
from sessions.domain.projections import Thresholds
from sessions.domain.vocabulary import ACTIVE, BLOCKED, CLOSED, IN_REVIEW

NOW = datetime(2026, 12, 5, 12, tzinfo=UTC)
ago = st.integers(0, 10_000).map(lambda minutes: NOW - timedelta(minutes=minutes))
facts = st.builds(
    Facts,
    status=st.sampled_from([ACTIVE, BLOCKED, IN_REVIEW]),
    since=ago,
    now=st.just(NOW),
    limits=st.just(Thresholds()),
    lease=st.none() | st.integers(1, 600).map(lambda m: timedelta(minutes=m)),
    red_since=st.none() | ago,
    duplicate=st.none() | st.tuples(st.just("earlier"), ago),
    spent_since=st.none() | ago,
)


@given(facts)
def test_every_kind_decided_is_a_known_one(found):
    decided = decide(found)
    assert decided is None or decided.attention.kind in KINDS


@given(facts)
def test_a_spent_budget_comes_before_every_other_kind(found):
    decided = decide(found)
    if found.spent_since is not None and found.spent_since < NOW:
        assert decided is not None and decided.attention.kind == "over_budget"


@given(facts)
def test_a_lapsed_session_is_never_called_duplicate_work(found):
    lapsed = found.status == ACTIVE and found.lease is not None and NOW - found.since > found.lease
    decided = decide(found)
    if lapsed and found.spent_since is None:
        assert decided is not None and decided.attention.kind == "lapsed"


@given(facts)
def test_red_checks_count_only_in_review(found):
    decided = decide(found)
    if decided is not None and decided.attention.kind == "checks_failed":
        assert found.status == IN_REVIEW


@given(facts)
def test_a_closed_session_needs_nobody(found):
    assert decide(Facts(CLOSED, found.since, NOW, Thresholds(), spent_since=found.since)) is None
