"""What a session spent (docs/rules.md, "Spend"): its token totals per model from its
`session_usage` reports, and their cost from a price table. Pure.

Reports carry totals so far, not increments: a model's count is the largest any of its
reports gave, so a report sent twice, or late, changes nothing. Money is `Decimal`
throughout: a model's cost is `Σ tokens × price / 10⁶`, exact, then rounded to six
decimals (half up), and every total is the exact sum of those rounded costs.
"""

import functools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import NamedTuple

from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import TOKEN_FIELDS, USAGE

# The four kinds of tokens, as a price table and a usage name them (`input` for
# `input_tokens`, and so on).
KINDS = tuple(name.removesuffix("_tokens") for name in TOKEN_FIELDS)
MILLION = Decimal(1_000_000)
CENT, MICRODOLLAR = Decimal("0.01"), Decimal("0.000001")


class Price(NamedTuple):
    """US dollars per million tokens of each kind."""

    input: Decimal
    output: Decimal
    cache_read: Decimal
    cache_write: Decimal


class PriceTable(dict[str, Price]):
    """A price table, {model: Price}, remembering which entry applies to each model it
    was asked about (a plan view prices thousands of sessions' few models)."""

    def __init__(self, entries: Mapping[str, Price]) -> None:
        super().__init__(entries)
        self.applying: dict[str, Price | None] = {}


class PriceTableError(ValueError):
    """A price table that is not `{model: {"input", "output", "cache_read",
    "cache_write"}}` with numbers ≥ 0; the message says where."""


def price_table(data: object) -> PriceTable:
    """A price table from its JSON form, or `PriceTableError` naming what is wrong."""
    if not isinstance(data, dict) or not data:
        raise PriceTableError("must be a JSON object of models, each with its four prices")
    table = {}
    for model, prices in data.items():
        if not isinstance(model, str) or not model.strip():
            raise PriceTableError("a model's name must be text")
        if not isinstance(prices, dict) or set(prices) != set(KINDS):
            raise PriceTableError(f"{model!r} must give exactly {', '.join(KINDS)}")
        values = []
        for kind in KINDS:
            value = prices[kind]
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise PriceTableError(f"{model!r} {kind} must be a number ≥ 0")
            try:
                number = Decimal(str(value))
            except InvalidOperation:
                raise PriceTableError(f"{model!r} {kind} must be a number ≥ 0") from None
            if not number.is_finite() or number < 0:
                raise PriceTableError(f"{model!r} {kind} must be a number ≥ 0")
            values.append(number)
        table[model] = Price(*values)
    return PriceTable(table)


# What may follow an entry in a model id it prices (v5): a date of eight digits, or
# `-latest`. Nothing else: the entry `claude-opus-5` does not price `claude-opus-5-5`,
# another model, whose price would only be a guess (and a budget would pause on it).
_SUFFIX = re.compile(r"-(?:\d{8}|latest)")


def price_of(model: str, prices: PriceTable) -> Price | None:
    """The entry that applies to `model`: one equal to it, or that it is followed by a
    date (`-YYYYMMDD`) or `-latest`. None for an unpriced model."""
    if model not in prices.applying:
        entry, dash, _ = model.rpartition("-")
        dated = dash and _SUFFIX.fullmatch(model[len(entry) :]) and entry in prices
        found = model if model in prices else entry if dated else None
        prices.applying[model] = prices[found] if found is not None else None
    return prices.applying[model]


class ModelUsage(NamedTuple):
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost_usd: Decimal | None  # None: the model has no price


class Usage(NamedTuple):
    tokens: dict[str, int]  # each kind summed over the models
    cost_usd: Decimal  # over the priced models (0 when none is)
    unpriced: tuple[str, ...]  # the models with no price, sorted
    by_model: dict[str, ModelUsage]


def model_cost(counts: Sequence[int], price: Price) -> Decimal:
    """`Σ tokens × price / 10⁶` for the four kinds, rounded to six decimals, half up.
    In whole picodollars when every price has at most six decimals (whole numbers are
    exact and many times faster than decimals), else in decimals."""
    picos = _picodollars_per_token(price)
    if picos is None:
        exact = sum((Decimal(n) * p for n, p in zip(counts, price, strict=True)), Decimal(0))
        return (exact / MILLION).quantize(MICRODOLLAR, rounding=ROUND_HALF_UP)
    picodollars = sum(n * p for n, p in zip(counts, picos, strict=True))
    return Decimal((picodollars + 500_000) // 1_000_000).scaleb(-6)  # half up, to micros


@functools.lru_cache(maxsize=256)
def _picodollars_per_token(price: Price) -> tuple[int, ...] | None:
    """Each price per million tokens in picodollars per token (× 10⁶), or None when one
    has more than six decimals."""
    scaled = [p * MILLION for p in price]
    if any(value != value.to_integral_value() for value in scaled):
        return None
    return tuple(int(value) for value in scaled)


def totals(events: Iterable[EventRecord]) -> dict[str, tuple[int, int, int, int]]:
    """Each model's token counts: every count's largest over that model's reports."""
    found: dict[str, tuple[int, int, int, int]] = {}
    for event in events:
        if event.type != USAGE or event.model is None:  # a usage report always names it
            continue
        counts = tuple(getattr(event, name) for name in TOKEN_FIELDS)
        before = found.get(event.model)
        found[event.model] = counts if before is None else tuple(map(max, before, counts))
    return found


def _costed(counts: Mapping[str, Sequence[int]], prices: PriceTable) -> Iterator[tuple]:
    """(model, its counts, its cost or None when unpriced) for each model of `counts`."""
    for model, figures in counts.items():
        price = price_of(model, prices)
        yield model, figures, model_cost(figures, price) if price is not None else None


def priced(counts: Mapping[str, Sequence[int]], prices: PriceTable) -> Usage | None:
    """The `Usage` of each model's token counts: None when there are none."""
    return priced_over([counts], prices)


def cost_of(counts: Mapping[str, Sequence[int]], prices: PriceTable) -> Decimal:
    """`priced(counts, prices).cost_usd` (0 for none), without the rest of a `Usage`."""
    return sum((cost for _, _, cost in _costed(counts, prices) if cost is not None), Decimal(0))


def usage(events: Iterable[EventRecord], prices: PriceTable) -> Usage | None:
    """A session's usage (docs/rules.md, "Spend"): None when it reported none."""
    return priced(totals(events), prices)


def priced_over(
    count_maps: Iterable[Mapping[str, Sequence[int]]], prices: PriceTable
) -> Usage | None:
    """`combined(priced(counts) for counts in count_maps)`, without a `Usage` for each
    (a plan view rolls up thousands of sessions)."""
    return _rolled(
        (model, ModelUsage._make((*figures, cost)))
        for counts in count_maps
        for model, figures, cost in _costed(counts, prices)
    )


def combined(usages: Iterable[Usage | None]) -> Usage | None:
    """A roll-up (a node's sessions, a plan's nodes): tokens and costs add, per model and
    in all; `unpriced` is the union. None when none of them reported anything."""
    return _rolled(part for found in usages if found is not None for part in found.by_model.items())


def _rolled(parts: Iterable[tuple[str, ModelUsage]]) -> Usage | None:
    """The `Usage` of (model, its usage) parts, those of one model added: None for none."""
    by_model: dict[str, ModelUsage] = {}
    for model, part in parts:
        before = by_model.get(model)
        by_model[model] = part if before is None else _added(before, part)
    return _summed(by_model) if by_model else None


def _added(a: ModelUsage, b: ModelUsage) -> ModelUsage:
    cost = None if a.cost_usd is None or b.cost_usd is None else a.cost_usd + b.cost_usd
    return ModelUsage._make((*(x + y for x, y in zip(a[:4], b[:4], strict=True)), cost))


def _summed(by_model: dict[str, ModelUsage]) -> Usage:
    tokens = {kind: sum(getattr(part, kind) for part in by_model.values()) for kind in KINDS}
    cost = sum((p.cost_usd for p in by_model.values() if p.cost_usd is not None), Decimal(0))
    unpriced = tuple(sorted(m for m, p in by_model.items() if p.cost_usd is None))
    return Usage(tokens, cost, unpriced, dict(sorted(by_model.items())))


def dollars(amount: Decimal) -> str:
    """An amount for people: dollars rounded half up to cents, "$1,234.57"."""
    return f"${amount.quantize(CENT, rounding=ROUND_HALF_UP):,}"
