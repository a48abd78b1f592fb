"""A plan's rows: its node sessions with their closes, read off the start and close
rows, and the plans' ids."""

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from django.db import connection

from sessions.domain import vocabulary
from sessions.domain.plans import NodeSession
from sessions.store.database import TABLE, aware_utc, ids_param, moment_param, one_of, run_prepared

# Plans -------------------------------------------------------------------------------

# Each session started on a node of the given plans, with its close's outcome: what the
# node states need, read off the start and close rows (indexed), whatever the sessions'
# lengths.
_NODE_SESSIONS = (
    "SELECT s.plan, s.session, s.node, s.timestamp, c.type, c.outcome, c.timestamp"
    f" FROM {TABLE} s LEFT JOIN {TABLE} c"
    f" ON c.session = s.session AND c.type = '{vocabulary.CLOSE}'"
    f" WHERE s.type = '{vocabulary.START}' AND {{plan_is_one_of}}"
)


def _ending(close: str | None, outcome: str | None, closed_at) -> tuple:
    """A node session's (outcome, close time) from its close's columns (both None while
    it is not closed; a close without an outcome is done)."""
    if close is None:
        return None, None
    return outcome or vocabulary.DONE, aware_utc(closed_at)


def node_sessions_of(plans: Sequence[str]) -> dict[str, list[NodeSession]]:
    """The node sessions of each of `plans` (those that have any)."""
    found: dict[str, list[NodeSession]] = {}
    sql = _NODE_SESSIONS.format(plan_is_one_of=one_of("s.plan"))
    for plan, session, node, opened, closed, outcome, closed_at in run_prepared(
        sql, [ids_param(plans)]
    ):
        ended = _ending(closed, outcome, closed_at)
        found.setdefault(plan, []).append(NodeSession(session, node, aware_utc(opened), *ended))
    return found


def node_sessions(plan: str) -> list[NodeSession]:
    return node_sessions_of([plan]).get(plan, [])


# For `plan_sessions`: a plan's starts above a position with their closes (part 0), the
# closes of the given sessions (part 1), and how many starts on the plan there are at or
# below the position (part 2).
_NODE_SESSIONS_AFTER = (
    "SELECT 0, s.id, s.session, s.node, s.timestamp, c.type, c.outcome, c.timestamp,"
    f" s.actor, s.idempotency_key FROM {TABLE} s LEFT JOIN {TABLE} c"
    f" ON c.session = s.session AND c.type = '{vocabulary.CLOSE}'"
    f" WHERE s.type = '{vocabulary.START}' AND s.plan = %s AND s.id > %s"
    " UNION ALL SELECT 1, NULL, c.session, NULL, NULL, c.type, c.outcome, c.timestamp,"
    f" NULL, NULL FROM {TABLE} c WHERE c.type = '{vocabulary.CLOSE}'"
    " AND {session_is_one_of}"
    " UNION ALL SELECT 2, COUNT(*), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"
    f" FROM {TABLE} WHERE type = '{vocabulary.START}' AND plan = %s AND id <= %s"
)


class NodeStart(NamedTuple):
    """A start on a plan's node, as `node_sessions_after` finds it."""

    position: int
    session: NodeSession
    key: tuple[str, str] | None  # (actor, idempotency key), when it was made under one


def node_sessions_after(
    plan: str, position: int, sessions: Sequence[str]
) -> tuple[list[NodeStart], dict[str, tuple[str, datetime]], int]:
    """What changed of a plan's node sessions since `position`, for a caller that knows
    them up to it: the starts on the plan above it; the outcome and close time of those
    of `sessions` that are closed; and how many starts on the plan there are at or below
    it (telling whether the table still holds what was known)."""
    sql = _NODE_SESSIONS_AFTER.format(session_is_one_of=one_of("c.session"))
    rows = run_prepared(sql, [plan, position, ids_param(sessions), plan, position])
    started, closed, below = [], {}, 0
    for part, number, session, node, opened, close, outcome, closed_at, actor, key in rows:
        if part == 2:
            below = number
            continue
        ended = _ending(close, outcome, closed_at)
        if part == 0:
            found = NodeSession(session, node, aware_utc(opened), *ended)
            started.append(NodeStart(number, found, (actor, key) if key is not None else None))
        else:
            closed[session] = ended
    return started, closed, below


_PLANS_SQL = f"SELECT session FROM {TABLE} WHERE type = '{vocabulary.PLAN_CREATE}'"


def plan_ids(created_by: datetime | None = None) -> list[str]:
    """Every plan's id (those created by `created_by`, if given), the newest first."""
    sql, params = _PLANS_SQL, []
    if created_by is not None:
        sql, params = sql + " AND timestamp <= %s", [moment_param(created_by)]
    with connection.cursor() as cursor:
        cursor.execute(sql + " ORDER BY id DESC", params)
        return [plan for (plan,) in cursor.fetchall()]
