"""A plan's rows: its node sessions with their closes, read off the start and close
rows, and the plans' ids."""

import json
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from django.db import connection

from sessions.domain import vocabulary
from sessions.domain.plans import Handoff, Liveness, NodeSession
from sessions.domain.records import EventRecord
from sessions.models import PROGRESS_NOTES_INDEX, Event
from sessions.store.database import (
    TABLE,
    aware_utc,
    by_index,
    each_stream,
    ids_param,
    latest_read,
    moment_param,
    one_of,
    per_stream,
    records,
    run_prepared,
)
from sessions.store.streams import NOTED_TRANSITIONS, TRANSITION, pending_messages_of, types_in

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


def _ending(
    close: str | None, outcome: str | None, closed_at: datetime | None
) -> tuple[str | None, datetime | None]:
    """A node session's (outcome, close time) from its close's columns (both None while
    it is not closed; a close without an outcome is done)."""
    if close is None:
        return None, None
    return outcome or vocabulary.DONE, aware_utc(closed_at) if closed_at is not None else None


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
) -> tuple[list[NodeStart], dict[str, tuple[str | None, datetime | None]], int]:
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


# Liveness and handoffs ------------------------------------------------------------------

_LAST_TRANSITION = (
    f"(SELECT {{column}} FROM {TABLE} WHERE session = s.value AND {TRANSITION}{{by}}"
    " ORDER BY seq DESC LIMIT 1)"
)
# One probe per type that keeps a worker alive (an `IN` would sort them all).
_LAST_OF_TYPE = (
    f"(SELECT timestamp FROM {TABLE} WHERE session = s.value"
    " AND type = '{kind}'{by} ORDER BY seq DESC LIMIT 1)"
)


def _liveness_sql(by: str) -> str:
    return (
        "SELECT s.value, "
        + ", ".join(
            [
                _LAST_TRANSITION.format(column="type", by=by),
                _LAST_TRANSITION.format(column="timestamp", by=by),
                *(_LAST_OF_TYPE.format(kind=t, by=by) for t in vocabulary.KEEPALIVE_TYPES),
            ]
        )
        + " FROM {each}"
    )


_LIVENESS = {False: _liveness_sql(""), True: _liveness_sql(" AND timestamp <= %s")}


def liveness_of(sessions: Sequence[str], at: datetime | None = None) -> dict[str, Liveness]:
    """Each session's status and last activity (its last event that is not a message),
    now or as of `at`: an index probe per session for its last transition and one for
    each keep-alive type, however many heartbeats and messages it holds (the
    transitions' partial index skips them)."""
    if not sessions:
        return {}
    params = [] if at is None else [moment_param(at)] * (2 + len(vocabulary.KEEPALIVE_TYPES))
    found = {}
    # Prepared (on PostgreSQL, planning its subqueries cost more than running them):
    # a claim that reclaims asks it under the plan's lock.
    sql = _LIVENESS[at is not None].format(each=each_stream())
    for session, kind, changed_at, *kept_alive in run_prepared(
        sql, [*params, json.dumps(list(sessions))]
    ):
        if kind is None:
            continue
        found[session] = Liveness(
            vocabulary.STATUS_AFTER[kind], latest_read(changed_at, *kept_alive)
        )
    return found


_NOTED = f"note IS NOT NULL AND {types_in(NOTED_TRANSITIONS)}"
_HANDOFFS = (
    "SELECT s.value,"
    f" (SELECT seq FROM {TABLE} WHERE session = s.value AND {_NOTED} ORDER BY seq DESC LIMIT 1),"
    f" (SELECT note FROM {TABLE} WHERE session = s.value AND {_NOTED} ORDER BY seq DESC LIMIT 1),"
    f" (SELECT seq FROM {TABLE} WHERE session = s.value AND type = '{vocabulary.BLOCK}'"
    " ORDER BY seq DESC LIMIT 1),"
    f" (SELECT reason FROM {TABLE} WHERE session = s.value AND type = '{vocabulary.BLOCK}'"
    " ORDER BY seq DESC LIMIT 1),"
    f" (SELECT note FROM {TABLE}{{progress_notes}} WHERE session = s.value"
    f" AND type = '{vocabulary.PROGRESS}' AND note IS NOT NULL ORDER BY seq DESC LIMIT 1)"
    " FROM {each}"
)


def handoffs_of(sessions: Sequence[str]) -> dict[str, Handoff]:
    """Each session's next action (its latest note-bearing event's note or reason), latest
    progress note and the messages its worker never acknowledged (the latest
    `MAX_BLOCKERS_SHOWN`): what a node's last attempt hands to the next worker."""
    if not sessions:
        return {}
    unread = pending_messages_of(sessions, vocabulary.MAX_BLOCKERS_SHOWN)
    found = {}
    rows = per_stream(_HANDOFFS, sessions, progress_notes=by_index(PROGRESS_NOTES_INDEX))
    for session, noted_seq, note, block_seq, reason, progress in rows:
        if block_seq is not None and (noted_seq is None or block_seq > noted_seq):
            note = reason
        found[session] = Handoff(note, progress, tuple(unread.get(session, ())))
    return found


def first_progress_notes(sessions: Sequence[str], seq_most: int) -> list[EventRecord]:
    """The progress notes among each session's first `seq_most` events (by the unique
    (session, seq) index: a few rows a session, whatever its length)."""
    rows = Event.objects.filter(
        session__in=list(sessions), seq__lte=seq_most, type=vocabulary.PROGRESS, note__isnull=False
    )
    return records(rows)


_LIVENESS_SETTING = (
    f"SELECT {{field}} FROM {TABLE} WHERE session = %s AND {{field}} IS NOT NULL"
    " AND timestamp <= %s ORDER BY seq DESC LIMIT 1"
)


def plan_setting_as_of(plan: str, field: str, at: datetime) -> int | None:
    """The plan's `lease` or `max_attempts` in force at `at`: the last one its events
    named by then, or None."""
    assert field in vocabulary.LIVENESS_FIELDS
    rows = run_prepared(_LIVENESS_SETTING.format(field=field), [plan, moment_param(at)])
    return rows[0][0] if rows else None
