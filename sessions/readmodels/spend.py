"""What sessions, nodes and plans spent (DESIGN.md, "Spend"): the pure `domain.spend`
over each session's token totals, priced by the table in force (`config.prices`)."""

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from decimal import Decimal

from sessions import config
from sessions.domain import spend, vocabulary
from sessions.domain.records import EventRecord
from sessions.store import spend as spend_rows

# {session: {model: (input, output, cache_read, cache_write)}}
Totals = dict[str, dict[str, tuple[int, ...]]]


def usage_of(session_id: str, events: Sequence[EventRecord], whole: bool) -> spend.Usage | None:
    """A session's usage: from its events when they are the whole stream, else (a long
    stream's view events, which hold its latest report if it has any) its totals read in
    one statement."""
    if whole:
        return spend.usage(events, config.prices())
    if not any(event.type == vocabulary.USAGE for event in events):
        return None
    return spend.priced(spend_rows.usage_totals([session_id]).get(session_id, {}), config.prices())


def totals_of(sessions: Iterable[str], at: datetime | None = None) -> Totals:
    """Each of `sessions`' token totals per model (by `at`, if given), in one statement."""
    return spend_rows.usage_totals(list(sessions), at)


def spend_in(since: datetime, until: datetime) -> dict[str, dict[str, Decimal]]:
    """The metrics' spend in `[since, until)`: each session's cost counted on the UTC day
    of its latest usage report, and for its owner (`{"by_day": {"YYYY-MM-DD": usd},
    "by_owner": {owner: usd}}`, each sorted; days and owners with nothing left out)."""
    prices = config.prices()
    by_day: dict[str, Decimal] = {}
    by_owner: dict[str, Decimal] = {}
    for reported in spend_rows.reported_in(since, until).values():
        if reported.last_report >= until:
            continue  # its latest report falls after the window: counted there
        cost = spend.cost_of(reported.totals, prices)
        day = reported.last_report.astimezone(UTC).date().isoformat()
        by_day[day] = by_day.get(day, Decimal(0)) + cost
        by_owner[reported.owner] = by_owner.get(reported.owner, Decimal(0)) + cost
    return {"by_day": dict(sorted(by_day.items())), "by_owner": dict(sorted(by_owner.items()))}
