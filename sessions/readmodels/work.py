"""Where a session's work lands, read for its view when the view has only the events
its status and blockers depend on (`store.work`: a few probes, however long the stream)."""

from collections.abc import Sequence
from datetime import datetime

from sessions import store
from sessions.domain import plans, vocabulary, work
from sessions.domain.records import EventRecord
from sessions.store import work as work_rows


def work_of(session_id: str, view_events: Sequence[EventRecord]) -> work.Work | None:
    """The session's `work`, from its view's events (which hold its latest work report,
    if any: none, and there is nothing to read)."""
    if not any(event.type == vocabulary.WORK for event in view_events):
        return None
    return current_work(session_id)


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


def duplicates(sessions: Sequence[str], shared: Sequence[str]) -> dict[str, tuple[str, object]]:
    """Of unclosed `sessions`, those working a repo and branch that an earlier-opened one
    of them works too: {session: (the earliest such session, since when)}. Repos compare
    case-insensitively; a branch in `shared` is never duplicate work."""
    groups: dict[tuple[str, str], list[tuple[object, str]]] = {}
    for session_id, (repo, branch, opened) in work_rows.places_of(list(sessions)).items():
        if branch not in shared:
            groups.setdefault((repo.lower(), branch), []).append((opened, session_id))
    found = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort()
        first = members[0][1]
        for _, session_id in members[1:]:
            since = work.place_since(work_rows.place_events(session_id))
            if since is not None:
                found[session_id] = (first, since)
    return found


def duplicates_among(
    works: dict[str, work.Work | None], shared: Sequence[str]
) -> dict[str, tuple[str, object]]:
    """`duplicates` for the sessions of a page (their current work given): two statements
    for the page — the unclosed sessions that reported those branches, and their places —
    then probes for the duplicates only."""
    branches = {here[1] for found in works.values() if (here := work.place(found, shared))}
    if not branches:
        return {}
    others = work_rows.sessions_reporting(sorted(branches), None)
    found = duplicates([*works, *others], shared)
    return {session_id: found[session_id] for session_id in works if session_id in found}


def merges_of(
    graph: plans.Graph, sessions: Sequence[plans.NodeSession], at: datetime | None = None
) -> dict[str, str | None]:
    """Under the plan's `done_when: "merge"`, the pull request state of each node's
    latest session closed done (now, or as of `at`), read fresh: a merge often comes
    after the close, with no start or close to tell a kept state it moved."""
    ids = plans.merge_candidates(graph, sessions)
    if not ids:
        return {}
    if at is None:
        found = {session_id: current_work(session_id) for session_id in ids}
    else:
        streams = store.streams_as_of(ids, at)
        found = {session_id: work.work(streams.get(session_id, [])) for session_id in ids}
    return {
        i: (w.pr.state if w is not None and w.pr is not None else None) for i, w in found.items()
    }
