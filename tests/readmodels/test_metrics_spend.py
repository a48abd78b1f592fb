"""The metrics' spend (docs/rules.md, "Spend"): kept per (UTC day, owner, agent) and caught up by
the reports between positions, it must say exactly what counting every session's latest
report in the window says — whatever the window's ends, and after sessions report again
(a session leaves its old day for its new one)."""

import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from sessions import config
from sessions.domain import spend
from sessions.domain.vocabulary import START, USAGE
from sessions.readmodels import spend as spend_model
from sessions.rules.append import append_event
from sessions.store import spend as spend_rows

pytestmark = pytest.mark.django_db(transaction=True)

T0 = datetime(2026, 11, 1, tzinfo=UTC)
HAIKU = "claude-haiku-4-5"


def counted_directly(since, until):
    """Every session whose latest report falls in the window, counted one by one."""
    by_day, by_owner, by_agent = {}, {}, {}
    for reported in spend_rows.reported(None).values():
        if since <= reported.last_report < until:
            usd = spend.cost_of(reported.totals, config.prices())
            day = reported.last_report.date().isoformat()
            program = reported.agent.split()[0] if reported.agent else "unnamed"
            by_day[day] = by_day.get(day, Decimal(0)) + usd
            by_owner[reported.owner] = by_owner.get(reported.owner, Decimal(0)) + usd
            by_agent[program] = by_agent.get(program, Decimal(0)) + usd
    return {
        "by_day": dict(sorted(by_day.items())),
        "by_owner": dict(sorted(by_owner.items())),
        "by_agent": dict(sorted(by_agent.items())),
    }


def report(session, user, moment, tokens):
    counts = {"input_tokens": tokens, "output_tokens": 0, "cache_read_tokens": 0}
    fields = {"model": HAIKU, **counts, "cache_write_tokens": 0}
    append_event(session, USAGE, fields, user=user, now=moment)


@pytest.mark.parametrize("seed", range(3))
def test_the_kept_spend_says_what_counting_every_session_says(alice, bob, seed):
    rng = random.Random(seed)
    users = (alice, bob)
    sessions = [f"s{n}" for n in range(8)]
    clock = T0
    agents = (None, "codex 0.169.0", "gemini 0.61.0")  # and a person's own
    for n, session in enumerate(sessions):
        started = {"title": session, "agent": agents[n % 3]}
        append_event(
            session, START, {k: v for k, v in started.items() if v}, user=users[n % 2], now=T0
        )
    for round_ in range(3):
        for _ in range(10):
            clock += timedelta(hours=rng.randint(1, 20))
            n = rng.randrange(len(sessions))
            report(sessions[n], users[n % 2], clock, rng.randint(1, 5) * 1_000_000 * (round_ + 1))
        for _ in range(6):
            since = T0 + timedelta(hours=rng.randint(0, 24 * 12), minutes=rng.randint(0, 59))
            until = since + timedelta(hours=rng.randint(1, 24 * 10))
            assert spend_model.spend_in(since, until) == counted_directly(since, until)
