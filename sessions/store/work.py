"""Where the work lands: the few `session_work` events a session's `work` depends on, and
the sessions a forge's delivery is about (by branch, by commit)."""

from collections.abc import Sequence
from datetime import datetime

from sessions.domain import vocabulary
from sessions.domain.records import EventRecord
from sessions.domain.work import head_report
from sessions.store.database import (
    RECORD_COLUMNS,
    TABLE,
    ids_param,
    moment_read,
    one_of,
    per_stream,
    records_from_rows,
    run_for_stream,
    run_prepared,
)

_WORK = f"type = '{vocabulary.WORK}'"
_LATEST_PR = (
    f"(SELECT pr FROM {TABLE} WHERE session = %s AND {_WORK} AND pr IS NOT NULL"
    " ORDER BY seq DESC LIMIT 1)"
)
# Where the latest pull request number's run of reports began: after the last report of
# another number (its url and state count from there).
_RUN_START = (
    f"COALESCE((SELECT MAX(seq) FROM {TABLE} WHERE session = %s AND {_WORK}"
    f" AND pr IS NOT NULL AND pr <> {_LATEST_PR}), 0)"
)


def _one(where: str, order: str = "DESC") -> str:
    return (
        f"SELECT * FROM (SELECT {RECORD_COLUMNS} FROM {TABLE} WHERE session = %s AND {_WORK}"
        f" AND {where} ORDER BY seq {order} LIMIT 1) AS found"
    )


# Each one index probe: the latest report (there is work), the latest repo, branch, head
# commit (a report without a check) and pull request number; the first report of that
# number; the latest url and state given since. `work` over these and the checks at the
# head is `work` over the whole stream (tests/store/test_work.py).
_FACTS_SQL = " UNION ALL ".join(
    [
        _one("seq > 0"),
        _one("repo IS NOT NULL"),
        _one("branch IS NOT NULL"),
        _one("commit_sha IS NOT NULL AND check_name IS NULL"),
        _one("pr IS NOT NULL"),
        _one(f"pr IS NOT NULL AND seq > {_RUN_START}", order="ASC"),
        _one(f"pr_url IS NOT NULL AND seq > {_RUN_START}"),
        _one(f"pr_state IS NOT NULL AND seq > {_RUN_START}"),
        # The last report of another number: a report read for its other facts may
        # name the latest number from an earlier run, which this one ends.
        _one(f"pr IS NOT NULL AND seq = {_RUN_START}"),
    ]
)
# The check runs reported at one commit, in stream order (by the commits' index).
_CHECKS_SQL = (
    f"SELECT {RECORD_COLUMNS} FROM {TABLE} WHERE commit_sha = %s AND session = %s"
    f" AND {_WORK} AND check_name IS NOT NULL ORDER BY seq"
)


def work_facts(session: str) -> list[EventRecord]:
    """The reports a session's repo, branch, head commit and pull request come from,
    in stream order (none for a session without work)."""
    rows = records_from_rows(run_for_stream(_FACTS_SQL, session))
    return sorted({record.seq: record for record in rows}.values(), key=lambda r: r.seq)


def checks_at(session: str, commit: str) -> list[EventRecord]:
    """The session's check reports at `commit`, in stream order."""
    return records_from_rows(run_prepared(_CHECKS_SQL, [commit, session]))


def work_events(session: str, facts: Sequence[EventRecord] | None = None) -> list[EventRecord]:
    """The events a session's `work` depends on, in stream order."""
    facts = work_facts(session) if facts is None else facts
    head = head_report(facts)
    checks = checks_at(session, head.commit) if head and head.commit else []
    return sorted({r.seq: r for r in [*facts, *checks]}.values(), key=lambda r: r.seq)


def _candidates_sql(by_branch: bool, by_commit: bool) -> str:
    where = []
    if by_branch:  # the branches as one parameter: a status may list 70,000 of them
        where.append(f"SELECT session FROM {TABLE} WHERE {one_of('branch')} AND {_WORK}")
    if by_commit:
        where.append(
            f"SELECT session FROM {TABLE} WHERE commit_sha = %s AND {_WORK} AND check_name IS NULL"
        )
    return (
        f"SELECT session, timestamp FROM {TABLE} WHERE seq = 1"
        f" AND type = '{vocabulary.START}' AND session IN ({' UNION '.join(where)})"
        " ORDER BY timestamp DESC, session DESC"
    )


def sessions_reporting(branches: Sequence[str], commit: str | None) -> list[tuple[str, datetime]]:
    """The sessions that ever reported one of `branches`, or `commit` as their head, with
    the moments they opened, latest-opened first (by the work indexes): the candidates of
    a forge's delivery, whose current work the caller checks."""
    if not branches and commit is None:
        return []
    sql = _candidates_sql(bool(branches), commit is not None)
    params = [*([ids_param(branches)] if branches else []), *([commit] if commit else [])]
    return [(session, moment_read(opened)) for session, opened in run_prepared(sql, params)]


def head_and_checks(session: str) -> list[EventRecord]:
    """The report that set the session's head commit and the check runs at it, in stream
    order: what red checks' moment depends on (none without a head)."""
    head = head_report(work_facts(session))
    if head is None or head.commit is None:  # (a head report always names its commit)
        return []
    runs = checks_at(session, head.commit)
    return sorted({r.seq: r for r in [head, *runs]}.values(), key=lambda r: r.seq)


def _last_other(column: str) -> str:
    """The seq of the latest report of `column` with a value other than its latest."""
    latest = (
        f"(SELECT {column} FROM {TABLE} WHERE session = %s AND {_WORK} AND {column} IS NOT NULL"
        " ORDER BY seq DESC LIMIT 1)"
    )
    return (
        f"COALESCE((SELECT MAX(seq) FROM {TABLE} WHERE session = %s AND {_WORK}"
        f" AND {column} IS NOT NULL AND {column} <> {latest}), 0)"
    )


# The last report of another repo and of another branch, and the first report of the
# current ones since: duplicate work's `since` is when both last became the current ones
# (`domain.work.place_since` over these is that of the whole stream: tests/store).
_PLACE_SQL = " UNION ALL ".join(
    [
        _one(f"repo IS NOT NULL AND seq = {_last_other('repo')}"),
        _one(f"branch IS NOT NULL AND seq = {_last_other('branch')}"),
        _one(f"repo IS NOT NULL AND seq > {_last_other('repo')}", order="ASC"),
        _one(f"branch IS NOT NULL AND seq > {_last_other('branch')}", order="ASC"),
    ]
)


def place_events(session: str) -> list[EventRecord]:
    """The reports a session's repo and branch have held their values since, in order."""
    rows = records_from_rows(run_for_stream(_PLACE_SQL, session))
    return sorted({r.seq: r for r in rows}.values(), key=lambda r: r.seq)


_PLACES = (
    "SELECT s.value,"
    f" (SELECT repo FROM {TABLE} WHERE session = s.value AND {_WORK} AND repo IS NOT NULL"
    " ORDER BY seq DESC LIMIT 1),"
    f" (SELECT branch FROM {TABLE} WHERE session = s.value AND {_WORK} AND branch IS NOT NULL"
    " ORDER BY seq DESC LIMIT 1),"
    f" (SELECT timestamp FROM {TABLE} WHERE session = s.value AND seq = 1),"
    f" (SELECT 1 FROM {TABLE} WHERE session = s.value AND type = '{vocabulary.CLOSE}' LIMIT 1)"
    " FROM {each}"
)


def places_of(sessions: Sequence[str]) -> dict[str, tuple[str, str, object]]:
    """Each unclosed session's current repo and branch (both reported) and when it was
    opened: a few index probes a session, in one statement."""
    if not sessions:
        return {}
    return {
        session: (repo, branch, moment_read(opened))
        for session, repo, branch, opened, closed in per_stream(_PLACES, sessions)
        if repo is not None and branch is not None and opened is not None and closed is None
    }
