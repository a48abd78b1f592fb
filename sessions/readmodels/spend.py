"""What sessions, nodes and plans spent (docs/rules.md, "Spend"): the pure `domain.spend`
over each session's token totals, priced by the table in force (`config.prices`)."""

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, time, timedelta
from decimal import Decimal
from typing import NamedTuple

from sessions import config, store
from sessions.domain import agents, spend, vocabulary
from sessions.domain.plans import NodeSession
from sessions.domain.records import EventRecord
from sessions.readmodels import open_sessions
from sessions.readmodels.kept import Kept
from sessions.store import spend as spend_rows
from sessions.store.spend import Totals


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


# A plan's node sessions' totals and its nodes' usage, by plan: (the safe position they
# were read up to, {session: totals}, {node: usage}). No usage row at or below that
# position can still appear (the open-sessions model's watermark), so a later view reads
# only the sessions that reported since, and prices again only when one did, instead of
# every session's reports at every view (bench/RESULTS.md §21). Kept only when read
# outside a transaction; bounded.
PLAN_USAGE = Kept(bound=200)


class PlanUsage(NamedTuple):
    nodes: dict[str, spend.Usage]  # each node's, over every session started on it
    total: spend.Usage | None  # the plan's: its nodes', retired ones included


def plan_usages(plan_id: str, on_nodes: Sequence[NodeSession]) -> PlanUsage:
    """What each node of the plan spent now, over every session started on it (those of
    `on_nodes`, the plan's node sessions; nodes with none left out), and the plan."""
    wanted = {session.session: session.node for session in on_nodes}
    watermark = open_sessions.safe_position()
    kept = PLAN_USAGE.get(plan_id)
    if kept is None or kept[0] > watermark:  # never read, or the table lost rows
        # Read whole, rows above the watermark included (read again once below it).
        totals = spend_rows.usage_totals(list(wanted))
        usages = rolled_up(totals, wanted)
        PLAN_USAGE.put(plan_id, (watermark, totals, usages))
        return usages
    position, totals, usages = kept
    if watermark > position:
        moved = store.streams_of_types([vocabulary.USAGE], position, watermark) & wanted.keys()
        if moved:
            totals = {**totals, **spend_rows.usage_totals(sorted(moved))}
            usages = rolled_up(totals, wanted)
        PLAN_USAGE.put(plan_id, (watermark, totals, usages))
    above = store.streams_of_types([vocabulary.USAGE], watermark, None) & wanted.keys()
    if above:  # not kept: rows above the watermark may yet be joined by lower ones
        return rolled_up({**totals, **spend_rows.usage_totals(sorted(above))}, wanted)
    return usages


def rolled_up(totals: Totals, node_of: dict[str, str]) -> PlanUsage:
    """What each node and the plan spent, from the sessions' totals (`node_of`: session →
    node)."""
    grouped: dict[str, list] = {}
    for session, counts in totals.items():
        if session in node_of:
            grouped.setdefault(node_of[session], []).append(counts)
    prices = config.prices()
    nodes = {node: spend.priced_over(counts, prices) for node, counts in grouped.items()}
    return PlanUsage(nodes, spend.combined(nodes.values()))


# What sessions spent per (UTC day, owner, agent program), each session on the day of its
# latest report: (position, prices, {(day, owner, program): (usd, sessions)}), caught up
# by the usage reports
# between positions (a session that reported again leaves its old day for its new one).
# One entry, bounded by days × owners × programs however many sessions reported, so that the
# metrics' spend reads a few rows instead of every report in the window (bench/RESULTS.md).
DAILY = Kept(bound=1)
Buckets = dict[tuple[str, str, str], tuple[Decimal, int]]


def _counted(buckets: Buckets, found: dict, prices: spend.PriceTable, sign: int) -> Buckets:
    """`buckets` with `found`'s sessions (`store.spend.Reported`) added (sign 1) or taken
    out (-1)."""
    for reported in found.values():
        day = reported.last_report.astimezone(UTC).date().isoformat()
        key = (day, reported.owner, agents.program(reported.agent))
        usd, sessions = buckets.get(key, (Decimal(0), 0))
        usd, sessions = usd + sign * spend.cost_of(reported.totals, prices), sessions + sign
        if sessions:
            buckets[key] = (usd, sessions)
        else:
            buckets.pop(key, None)
    return buckets


def _moved(buckets: Buckets, sessions: set[str], before: int, after: int | None) -> Buckets:
    """`buckets` (a copy) with `sessions` moved from their state at position `before` to
    their state at `after` (None: now)."""
    if not sessions:
        return buckets
    prices, ids = config.prices(), sorted(sessions)
    buckets = _counted(dict(buckets), spend_rows.reported(ids, before), prices, -1)
    return _counted(buckets, spend_rows.reported(ids, after), prices, 1)


def daily_spend() -> Buckets:
    """What sessions spent per (UTC day, owner, agent program), now."""
    prices, watermark = config.prices(), open_sessions.safe_position()
    kept = DAILY.get("all")
    if kept is None or kept[0] > watermark or kept[1] is not prices:
        buckets = _counted({}, spend_rows.reported(None, watermark), prices, 1)
    else:
        moved = store.streams_of_types([vocabulary.USAGE], kept[0], watermark)
        buckets = _moved(kept[2], moved, kept[0], watermark)
    DAILY.put("all", (watermark, prices, buckets))
    # Not kept: rows above the watermark may yet be joined by lower ones.
    above = store.streams_of_types([vocabulary.USAGE], watermark, None)
    return _moved(buckets, above, watermark, None)


def spend_in(since: datetime, until: datetime) -> dict[str, dict[str, Decimal]]:
    """The metrics' spend in `[since, until)`: each session's cost counted on the UTC day
    of its latest usage report, for its owner and for the program of its agent
    (`{"by_day": {"YYYY-MM-DD": usd}, "by_owner": {owner: usd}, "by_agent": {program:
    usd}}`, each sorted). The whole days inside the window come from
    `daily_spend`; the part-days at its ends, from their own reports."""
    first = _midnight(since) + (timedelta(days=1) if _midnight(since) < since else timedelta(0))
    last = _midnight(until)
    by_day: dict[str, Decimal] = {}
    by_owner: dict[str, Decimal] = {}
    by_agent: dict[str, Decimal] = {}

    def count(day: str, owner: str, program: str, usd: Decimal) -> None:
        by_day[day] = by_day.get(day, Decimal(0)) + usd
        by_owner[owner] = by_owner.get(owner, Decimal(0)) + usd
        by_agent[program] = by_agent.get(program, Decimal(0)) + usd

    if first < last:
        low, high = first.date().isoformat(), last.date().isoformat()
        for (day, owner, program), (usd, _) in daily_spend().items():
            if low <= day < high:
                count(day, owner, program, usd)
    prices = config.prices()
    ends = (
        [(since, min(first, until)), (max(last, since), until)]
        if first < last
        else [(since, until)]
    )
    for begin, end in ends:
        if begin >= end:
            continue
        for reported in spend_rows.reported_in(begin, end).values():
            if begin <= reported.last_report < end:
                day = reported.last_report.astimezone(UTC).date().isoformat()
                cost = spend.cost_of(reported.totals, prices)
                count(day, reported.owner, agents.program(reported.agent), cost)
    return {
        "by_day": dict(sorted(by_day.items())),
        "by_owner": dict(sorted(by_owner.items())),
        "by_agent": dict(sorted(by_agent.items())),
    }


def _midnight(moment: datetime) -> datetime:
    return datetime.combine(moment.astimezone(UTC).date(), time(0), tzinfo=UTC)
