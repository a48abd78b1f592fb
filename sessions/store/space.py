"""Space (docs/rules.md, "Space"): the plans that name a repository, the unclosed sessions on
their nodes with their owners, and the paths sessions reported writing."""

import json
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from django.db import connection

from sessions.domain import vocabulary
from sessions.models import TOUCHED_INDEX
from sessions.store.database import (
    TABLE,
    aware_utc,
    by_index,
    column_elements,
    ids_param,
    one_of,
)
from sessions.store.streams import types_in

# By the partial index of plan events that name a repo: a handful of rows per plan.
_PLANS_NAMING = (
    f"SELECT DISTINCT session FROM {TABLE}"
    f" WHERE {types_in(vocabulary.PLAN_EVENT_TYPES)} AND repo IS NOT NULL AND LOWER(repo) = %s"
)


def plans_naming(repo: str) -> list[str]:
    """The plans any of whose events named `repo` (compared case-insensitively): those
    whose repo it may be now (the plan's graph says which it is)."""
    with connection.cursor() as cursor:
        cursor.execute(_PLANS_NAMING, [repo.lower()])
        return sorted(row[0] for row in cursor.fetchall())


class Unclosed(NamedTuple):
    plan: str
    session: str
    node: str
    owner: str
    opened_at: datetime
    agent: str | None  # which agent started it (v5), if one did


_UNCLOSED = (
    f"SELECT s.plan, s.session, s.node, s.actor, s.timestamp, s.agent FROM {TABLE} s"
    f" WHERE s.type = '{vocabulary.START}' AND {{plan_is_one_of}} AND NOT EXISTS"
    f" (SELECT 1 FROM {TABLE} c WHERE c.session = s.session AND c.type = '{vocabulary.CLOSE}')"
)


def unclosed_on(plans: Sequence[str]) -> list[Unclosed]:
    """The unclosed sessions on the nodes of `plans` (by the index of the plans'
    starts), with their owners and agents."""
    if not plans:
        return []
    sql = _UNCLOSED.format(plan_is_one_of=one_of("s.plan"))
    with connection.cursor() as cursor:
        cursor.execute(sql, [ids_param(plans)])
        return [Unclosed._make((*row[:4], aware_utc(row[4]), row[5])) for row in cursor.fetchall()]


# A session's touched paths, newest report first (by its index of events by type).
_TOUCHED = (
    f"SELECT seq, paths FROM {TABLE}{{index}} WHERE session = %s"
    f" AND type = '{vocabulary.PROGRESS}' AND paths IS NOT NULL ORDER BY seq DESC"
)
_TOUCHED_COUNT = (
    f"SELECT COUNT(DISTINCT p.value) FROM {TABLE} e{{index}}, {{each}} WHERE e.session = %s"
    f" AND e.type = '{vocabulary.PROGRESS}' AND e.paths IS NOT NULL"
)


def touched(session: str, most: int) -> tuple[list[str], int]:
    """The distinct paths a session reported writing, most recent first (the later in a
    report's list first), at most `most` of them, and how many there are in all."""
    found: dict[str, None] = {}
    with connection.cursor() as cursor:
        index = by_index(TOUCHED_INDEX)
        cursor.execute(_TOUCHED.format(index=index), [session])
        for _, text in cursor:
            for path in reversed(json.loads(text)):
                found.setdefault(path, None)
            if len(found) >= most:
                break
        elements = column_elements("e.paths", "p")
        cursor.execute(_TOUCHED_COUNT.format(index=index, each=elements), [session])
        count = cursor.fetchone()[0]
    return list(found)[:most], count
