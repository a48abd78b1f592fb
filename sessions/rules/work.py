"""Where the work lands (docs/rules.md): the rules of a `session_work` that depend on its
stream — a pull request's url or state needs a pull request known — and the close a
merge appends in the same transaction, which fences the worker still pushing."""

from sessions.domain import vocabulary, work
from sessions.domain.records import EventRecord
from sessions.rules.refusals import InvalidEvent
from sessions.store import work as work_rows

# A merge's close is appended under the work report's idempotency key followed by this,
# so a redelivered merge appends neither again.
CLOSE_KEY_SUFFIX = "/close"


def check_pr_known(stream_id: str, fields: dict) -> None:
    """A `pr_url` or `pr_state` without a `pr` needs one reported before (400)."""
    if fields.get("pr") is not None:
        return
    if fields.get("pr_url") is None and fields.get("pr_state") is None:
        return
    if not any(event.pr is not None for event in work_rows.work_facts(stream_id)):
        raise InvalidEvent(
            {"pr": "is required with pr_url or pr_state: no pull request is known yet"}
        )


def reports_a_merge(event_type: str, fields: dict) -> bool:
    """Whether an event of `event_type` with `fields` reports its pull request merged."""
    return event_type == vocabulary.WORK and fields.get("pr_state") == work.MERGED


def merges(event_type: str, fields: dict, status: str | None) -> bool:
    """Whether the event merges the work of a session not yet closed (then its close is
    appended with it)."""
    return reports_a_merge(event_type, fields) and status not in (None, vocabulary.CLOSED)


def merge_close(stream_id: str, report: EventRecord, seq: int) -> EventRecord:
    """The close a merge appends at `seq` (done, the reporter as actor, its note naming
    the pull request and the merged commit, or the session's head when the report names
    none)."""
    facts = work_rows.work_facts(stream_id)
    known = work.work([*facts, report]) or work.Work(None, None, None, None, None)
    number = report.pr if report.pr is not None else known.pr and known.pr.number
    commit = report.commit if report.commit is not None else known.commit
    note = work.merge_note(number, commit) if number is not None else "merged"
    return EventRecord(
        stream_id,
        seq,
        vocabulary.CLOSE,
        report.timestamp,
        report.actor,
        note=note,
        outcome=vocabulary.DONE,
    )


def close_key(key: str | None) -> str | None:
    if key is None:
        return None
    return key[: vocabulary.IDEMPOTENCY_KEY_MAX - len(CLOSE_KEY_SUFFIX)] + CLOSE_KEY_SUFFIX
