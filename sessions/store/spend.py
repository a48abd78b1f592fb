"""What sessions spent: each one's token totals per model, read in one statement (a
count's largest over the model's reports, as `domain.spend.totals` folds them), so a view
or a roll-up never reads a stream's reports one by one."""

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from django.db import connection

from sessions.domain import vocabulary
from sessions.domain.records import EventRecord
from sessions.models import Event
from sessions.store.database import TABLE, ids_param, moment_param, moment_read, one_of, records

# {session: {model: (input, output, cache_read, cache_write)}}
Totals = dict[str, dict[str, tuple[int, ...]]]

_COUNTS = ", ".join(f"MAX({name})" for name in vocabulary.TOKEN_FIELDS)
# By the index of a session's events by type (session, type, seq): its reports only.
_TOTALS = (
    f"SELECT session, usage_model, {_COUNTS} FROM {TABLE}"
    f" WHERE {{sessions}} AND type = '{vocabulary.USAGE}'{{by}} GROUP BY session, usage_model"
)


def usage_totals(sessions: Sequence[str], at: datetime | None = None) -> Totals:
    """The token totals of those of `sessions` that reported usage (by `at`, if given)."""
    if not sessions:
        return {}
    found: Totals = {}
    by, params = ("", []) if at is None else (" AND timestamp <= %s", [moment_param(at)])
    with connection.cursor() as cursor:
        sql = _TOTALS.format(sessions=one_of("session"), by=by)
        cursor.execute(sql, [ids_param(sessions), *params])
        for session, model, *counts in cursor.fetchall():
            found.setdefault(session, {})[model] = tuple(counts)
    return found


# The token totals per model of every session with a usage report in a window, each
# model's latest report's time, and the session's owner and agent: the window's reports by the
# time index, then each of their sessions' reports by its index of events by type.
_REPORTED_IN = (
    f"SELECT u.session, u.usage_model, {_COUNTS}, MAX(u.timestamp),"
    f" (SELECT s.actor FROM {TABLE} s WHERE s.session = u.session AND s.seq = 1),"
    f" (SELECT s.agent FROM {TABLE} s WHERE s.session = u.session AND s.seq = 1)"
    f" FROM {TABLE} u WHERE u.type = '{vocabulary.USAGE}' AND u.session IN"
    f" (SELECT w.session FROM {TABLE} w WHERE w.type = '{vocabulary.USAGE}'"
    " AND w.timestamp >= %s AND w.timestamp < %s) GROUP BY u.session, u.usage_model"
)


class Reported(NamedTuple):
    owner: str
    last_report: datetime  # the session's latest usage report
    totals: dict[str, tuple[int, ...]]  # per model (input, output, cache_read, cache_write)
    agent: str | None  # the agent its start names (v5), if any


def reported_in(since: datetime, until: datetime) -> dict[str, Reported]:
    """Every session with a usage report in `[since, until)`: its owner, its latest
    report's time (which may be past `until`) and its token totals, in one statement."""
    return _folded(_REPORTED_IN, [moment_param(since), moment_param(until)])


# The same of given sessions (or of all), counting only the rows up to a position.
_REPORTED = (
    f"SELECT u.session, u.usage_model, {_COUNTS}, MAX(u.timestamp),"
    f" (SELECT s.actor FROM {TABLE} s WHERE s.session = u.session AND s.seq = 1),"
    f" (SELECT s.agent FROM {TABLE} s WHERE s.session = u.session AND s.seq = 1)"
    f" FROM {TABLE} u WHERE u.type = '{vocabulary.USAGE}'{{sessions}}{{up_to}}"
    " GROUP BY u.session, u.usage_model"
)


def reported(sessions: Sequence[str] | None, up_to: int | None = None) -> dict[str, Reported]:
    """`reported_in`'s facts of `sessions` (None: of every session that reported), from
    their rows at positions up to `up_to` (None: all)."""
    where = ""
    params: list[object] = []
    if sessions is not None:
        if not sessions:
            return {}
        where, params = f" AND {one_of('u.session')}", [ids_param(sessions)]
    bound = "" if up_to is None else " AND u.id <= %s"
    sql = _REPORTED.format(sessions=where, up_to=bound)
    return _folded(sql, params if up_to is None else [*params, up_to])


def _folded(sql: str, params: list) -> dict[str, Reported]:
    found: dict[str, Reported] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for session, model, *counts, moment, owner, agent in cursor.fetchall():
            moment = moment_read(moment)
            known = found.get(session)
            if known is None:
                known = found[session] = Reported(owner, moment, {}, agent)
            elif moment > known.last_report:
                known = found[session] = known._replace(last_report=moment)
            known.totals[model] = tuple(counts)
    return found


def usage_reports(sessions: Sequence[str]) -> list[EventRecord]:
    """Every usage report of `sessions` (by the index of events by type), in time order:
    when a spend crossed a budget."""
    if not sessions:
        return []
    rows = Event.objects.filter(session__in=list(sessions), type=vocabulary.USAGE)
    return sorted(records(rows), key=lambda event: (event.timestamp, event.session, event.seq))
