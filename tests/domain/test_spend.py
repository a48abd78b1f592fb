"""Spend (docs/rules.md, "Spend"): a session's usage from its totals so far, priced by the
longest dated prefix, in exact decimals rounded per model; roll-ups; the price table's
own rules; the table the project ships."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions.domain import price_list, spend
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import PROGRESS, TOKEN_FIELDS, USAGE

T0 = datetime(2026, 12, 1, tzinfo=UTC)
PRICES = spend.price_table(
    {
        "claude-sonnet-4": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75},
        "claude-sonnet-4-5": {"input": 2, "output": 10, "cache_read": 0.2, "cache_write": 2.5},
    }
)


def report(seq, model, *counts):
    counts = dict(zip(TOKEN_FIELDS, counts, strict=True))
    return EventRecord("s", seq, USAGE, T0, "a", model=model, **counts)


def test_an_entry_prices_its_model_and_its_dated_ids():
    assert spend.price_of("claude-sonnet-4", PRICES).input == 3
    assert spend.price_of("claude-sonnet-4-20250514", PRICES).input == 3


def test_a_dated_id_takes_its_own_models_entry():
    assert spend.price_of("claude-sonnet-4-5-20250929", PRICES).input == 2


def test_an_entry_prices_its_latest_alias():
    assert spend.price_of("claude-sonnet-4-latest", PRICES).input == 3


def test_an_entry_does_not_price_a_model_it_only_starts():
    assert spend.price_of("claude-sonnet-40", PRICES) is None
    assert spend.price_of("claude-sonnet", PRICES) is None


def test_an_entry_does_not_price_another_model_named_after_it():
    # v5: the pinned Claude Code reports claude-opus-5-5; claude-opus-5's price is a guess.
    assert spend.price_of("claude-sonnet-4-6", PRICES) is None
    assert spend.price_of("claude-sonnet-4-5-1", PRICES) is None
    assert spend.price_of("claude-sonnet-4-2025", PRICES) is None


def test_a_models_cost_is_exact_then_rounded_half_up_to_six_decimals():
    price = spend.Price(Decimal("3"), Decimal("15"), Decimal("0.3"), Decimal("3.75"))
    assert spend.model_cost((1, 0, 0, 0), price) == Decimal("0.000003")
    assert spend.model_cost((0, 0, 5, 0), price) == Decimal("0.000002")  # 0.0000015 up
    assert spend.model_cost((1_000_000, 1_000_000, 0, 0), price) == Decimal("18")


def test_no_report_is_no_usage():
    assert spend.usage([EventRecord("s", 1, PROGRESS, T0, "a")], PRICES) is None


def test_each_count_is_its_largest_over_the_models_reports():
    found = spend.usage(
        [report(1, "claude-sonnet-4", 10, 5, 0, 7), report(2, "claude-sonnet-4", 8, 9, 1, 7)],
        PRICES,
    )
    assert found.by_model["claude-sonnet-4"][:4] == (10, 9, 1, 7)


def test_totals_and_cost_sum_the_models_and_unpriced_ones_are_listed():
    events = [
        report(1, "claude-sonnet-4", 1_000_000, 0, 0, 0),
        report(2, "claude-sonnet-4-5-20250929", 0, 1_000_000, 0, 0),
        report(3, "their-model", 5, 5, 5, 5),
    ]
    found = spend.usage(events, PRICES)
    assert found.tokens == {
        "input": 1_000_005,
        "output": 1_000_005,
        "cache_read": 5,
        "cache_write": 5,
    }
    assert found.cost_usd == Decimal("13")
    assert found.unpriced == ("their-model",)
    assert found.by_model["their-model"].cost_usd is None


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["claude-sonnet-4", "claude-sonnet-4-5", "x"]),
            *[st.integers(0, 10**15)] * 4,
        ),
        min_size=1,
        max_size=12,
    ),
    st.randoms(),
)
def test_a_repeated_or_late_report_changes_nothing(reports, random):
    events = [report(n, *r) for n, r in enumerate(reports, start=1)]
    again = events + random.sample(events, k=len(events) // 2)
    random.shuffle(again)
    assert spend.usage(again, PRICES) == spend.usage(events, PRICES)


def test_a_roll_up_adds_tokens_and_costs_and_unites_the_unpriced():
    one = spend.usage([report(1, "claude-sonnet-4", 1_000_000, 0, 0, 0)], PRICES)
    two = spend.usage(
        [report(1, "claude-sonnet-4", 0, 1_000_000, 0, 0), report(2, "y", 1, 1, 1, 1)], PRICES
    )
    found = spend.combined([one, None, two])
    assert found.cost_usd == Decimal("18")
    assert found.by_model["claude-sonnet-4"][:4] == (1_000_000, 1_000_000, 0, 0)
    assert found.unpriced == ("y",)


def test_nothing_reported_rolls_up_to_nothing():
    assert spend.combined([None, None]) is None


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ([], "must be a JSON object"),
        ({}, "must be a JSON object"),
        ({"m": {"input": 1, "output": 1, "cache_read": 1}}, "'m' must give exactly"),
        (
            {"m": {"input": -1, "output": 1, "cache_read": 1, "cache_write": 1}},
            "'m' input must be a number ≥ 0",
        ),
        ({"m": {"input": True, "output": 1, "cache_read": 1, "cache_write": 1}}, "'m' input"),
        ({"m": {"input": "lots", "output": 1, "cache_read": 1, "cache_write": 1}}, "'m' input"),
        ({"m": {"input": "NaN", "output": 1, "cache_read": 1, "cache_write": 1}}, "'m' input"),
        ({" ": {"input": 1, "output": 1, "cache_read": 1, "cache_write": 1}}, "a model's name"),
    ],
)
def test_a_malformed_price_table_is_refused_saying_where(table, says):
    with pytest.raises(spend.PriceTableError, match=says):
        spend.price_table(table)


def test_the_shipped_table_is_a_price_table_that_prices_claude_codes_models():
    table = spend.price_table(price_list.PRICES)
    for model in ("claude-opus-5", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"):
        assert spend.price_of(model, table) is not None
    assert price_list.READ_ON and price_list.SOURCE.startswith("https://")


def test_dollars_are_rounded_half_up_to_cents():
    assert spend.dollars(Decimal("1234.565")) == "$1,234.57"


prices_per_million = st.decimals(min_value=0, max_value=1000, places=6)


@given(st.tuples(*[st.integers(0, 10**15)] * 4), st.tuples(*[prices_per_million] * 4))
def test_a_models_cost_is_the_exact_decimal_rounded_half_up(counts, prices):
    exact = sum(Decimal(n) * p for n, p in zip(counts, prices, strict=True)) / spend.MILLION
    expected = exact.quantize(Decimal("0.000001"), rounding="ROUND_HALF_UP")
    assert spend.model_cost(counts, spend.Price(*prices)) == expected


def test_a_price_with_more_than_six_decimals_is_still_exact():
    price = spend.Price(Decimal("0.0000001"), Decimal(0), Decimal(0), Decimal(0))
    assert spend.model_cost((15_000_000, 0, 0, 0), price) == Decimal("0.000002")  # 0.0000015


session_totals = st.dictionaries(
    st.sampled_from(["claude-sonnet-4", "claude-sonnet-4-5-x", "theirs"]),
    st.tuples(*[st.integers(0, 10**12)] * 4),
    max_size=3,
)


@given(st.lists(session_totals, max_size=6))
def test_a_roll_up_from_totals_is_the_roll_up_of_each_sessions_usage(count_maps):
    each = [spend.priced(counts, PRICES) for counts in count_maps]
    assert spend.priced_over(count_maps, PRICES) == spend.combined(each)


@given(session_totals)
def test_a_cost_alone_is_the_usages_cost(counts):
    found = spend.priced(counts, PRICES)
    assert spend.cost_of(counts, PRICES) == (found.cost_usd if found else 0)
