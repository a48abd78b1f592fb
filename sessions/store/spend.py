"""What sessions spent: each one's token totals per model, read in one statement (a
count's largest over the model's reports, as `domain.spend.totals` folds them), so a view
or a roll-up never reads a stream's reports one by one."""

from collections.abc import Sequence
from datetime import datetime

from django.db import connection

from sessions.domain import vocabulary
from sessions.store.database import TABLE, ids_param, moment_param, moment_read, one_of

_COUNTS = ", ".join(f"MAX({name})" for name in vocabulary.TOKEN_FIELDS)
# By the index of a session's events by type (session, type, seq): its reports only.
_TOTALS = (
    f"SELECT session, usage_model, {_COUNTS} FROM {TABLE}"
    f" WHERE {{sessions}} AND type = '{vocabulary.USAGE}'{{by}} GROUP BY session, usage_model"
)


def usage_totals(
    sessions: Sequence[str], at: datetime | None = None
) -> dict[str, dict[str, tuple[int, ...]]]:
    """{session: {model: (input, output, cache_read, cache_write)}} of those of `sessions`
    that reported usage (by `at`, if given)."""
    if not sessions:
        return {}
    found: dict[str, dict[str, tuple[int, ...]]] = {}
    by, params = ("", []) if at is None else (" AND timestamp <= %s", [moment_param(at)])
    with connection.cursor() as cursor:
        sql = _TOTALS.format(sessions=one_of("session"), by=by)
        cursor.execute(sql, [ids_param(sessions), *params])
        for session, model, *counts in cursor.fetchall():
            found.setdefault(session, {})[model] = tuple(counts)
    return found


# The sessions whose latest usage report falls in a window, with that report's time and
# the session's owner: reports in the window by the time index, less those with a later
# report (by the session's index of its events by type).
_LAST_REPORTS_IN = (
    f"SELECT u.session, MAX(u.timestamp),"
    f" (SELECT s.actor FROM {TABLE} s WHERE s.session = u.session AND s.seq = 1)"
    f" FROM {TABLE} u WHERE u.type = '{vocabulary.USAGE}' AND u.timestamp >= %s"
    " AND u.timestamp < %s AND NOT EXISTS (SELECT 1 FROM"
    f" {TABLE} later WHERE later.session = u.session AND later.type = '{vocabulary.USAGE}'"
    " AND later.timestamp >= %s) GROUP BY u.session"
)


def last_reports_in(since: datetime, until: datetime) -> list[tuple[str, datetime, str]]:
    """(session, its latest usage report's time, its owner) of every session whose latest
    usage report is in `[since, until)`."""
    params = [moment_param(since), moment_param(until), moment_param(until)]
    with connection.cursor() as cursor:
        cursor.execute(_LAST_REPORTS_IN, params)
        return [(session, moment_read(at), owner) for session, at, owner in cursor.fetchall()]
