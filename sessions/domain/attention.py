"""Attention, decided once: the one reason a person should look at a session now, from
the facts the read models gather about it. The board's strip, the session list's
`attention` filter and a session's view all ask `decide`, so they cannot disagree (they
did: `?attention=false` knew four kinds of seven, and listed a session with red checks
under both true and false). Pure.

The kinds, the first that applies winning:
1. `over_budget`: its node's budget (or its plan's) is spent;
2. `duplicate`: an earlier-opened unclosed session works the same repo and branch
   (not for a lapsed session: its work is another's to take up);
3. `checks_failed`: in review with red checks at its head;
4. `lapsed`: an active node session silent past its plan's lease;
5. its status lasting too long: `stale` (active), `blocked_long`, `review_long`.
The first four need a person from the moment they begin; the last, once the status has
lasted longer than its threshold.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from sessions.domain.budgets import OVER_BUDGET
from sessions.domain.projections import (
    ATTENTION_OF,
    LAPSED,
    Attention,
    Thresholds,
    is_lapsed,
    threshold_of,
)
from sessions.domain.vocabulary import ACTIVE, IN_REVIEW
from sessions.domain.work import CHECKS_FAILED, DUPLICATE

KINDS = (OVER_BUDGET, DUPLICATE, CHECKS_FAILED, LAPSED, *(k for k, _ in ATTENTION_OF.values()))


@dataclass(frozen=True)
class Facts:
    """What attention is decided from, for one session at one moment."""

    status: str | None
    since: datetime  # when its status's own interval began (`projections.attention_since`)
    now: datetime
    limits: Thresholds
    lease: timedelta | None = None  # its plan's, for a node session
    red_since: datetime | None = None  # since when the checks at its head have been red
    duplicate: tuple[str, datetime] | None = None  # (the earlier session, since when)
    spent_since: datetime | None = None  # since when its budget has been spent


class Overdue(NamedTuple):
    attention: Attention
    cut_off: datetime  # the moment before which it needed a person: `since` less it ranks


def decide(facts: Facts) -> Overdue | None:
    """The attention `facts` call for at their `now`, with its cut-off, or None: a
    closed session, or one whose status has not yet lasted too long."""
    if facts.status not in ATTENTION_OF:
        return None
    now = facts.now
    lapsed = facts.status == ACTIVE and is_lapsed(facts.since, now, facts.lease)
    if facts.spent_since is not None:
        found = Overdue(Attention(OVER_BUDGET, facts.spent_since), now)
    elif facts.duplicate is not None and not lapsed:
        other, since = facts.duplicate
        found = Overdue(Attention(DUPLICATE, since, other), now)
    elif facts.status == IN_REVIEW and facts.red_since is not None:
        found = Overdue(Attention(CHECKS_FAILED, facts.red_since), now)
    elif lapsed and facts.lease is not None:
        found = Overdue(Attention(LAPSED, facts.since), now - facts.lease)
    else:
        kind, threshold = ATTENTION_OF[facts.status][0], threshold_of(facts.status, facts.limits)
        found = Overdue(Attention(kind, facts.since), now - threshold)
    return found if found.attention.since < found.cut_off else None


def attention_of(facts: Facts) -> Attention | None:
    """`decide`'s attention alone: what a session's view says."""
    found = decide(facts)
    return None if found is None else found.attention
