"""Where a session's work lands, read for its view when the view has only the events
its status and blockers depend on (`store.work`: a few probes, however long the stream)."""

from collections.abc import Sequence

from sessions.domain import vocabulary, work
from sessions.domain.records import EventRecord
from sessions.store import work as work_rows


def work_of(session_id: str, view_events: Sequence[EventRecord]) -> work.Work | None:
    """The session's `work`, from its view's events (which hold its latest work report,
    if any: none, and there is nothing to read)."""
    if not any(event.type == vocabulary.WORK for event in view_events):
        return None
    return work.work(work_rows.work_events(session_id))


def current_work(session_id: str) -> work.Work | None:
    """A session's `work` now, read by its few reports."""
    return work.work(work_rows.work_events(session_id))


def sessions_at(
    repo: str | None, branches: Sequence[str], commit: str | None, most: int
) -> list[str]:
    """The `most` latest-opened sessions whose current work is on `repo` (compared
    case-insensitively, as GitHub's names are) and one of `branches`, or, given a
    `commit`, at that head commit."""
    wanted_repo = repo.lower() if repo else None
    found = []
    for session_id in work_rows.sessions_reporting(list(branches), commit):
        now = current_work(session_id)
        if now is None:
            continue
        on_branch = (
            wanted_repo is not None
            and now.repo is not None
            and now.repo.lower() == wanted_repo
            and now.branch in branches
        )
        if on_branch or (commit is not None and now.commit == commit):
            found.append(session_id)
            if len(found) == most:
                break
    return found


def checks_failed_since(session_id: str, status: str | None) -> object:
    """Since when the session, in review, has had red checks at its head, or None."""
    if status != vocabulary.IN_REVIEW:
        return None
    return work.checks_failed_since(status, work_rows.head_and_checks(session_id))
