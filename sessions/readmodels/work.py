"""Where a session's work lands, read for its view when the view has only the events
its status and blockers depend on (`store.work`: a few probes, however long the stream)."""

from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from sessions import store
from sessions.domain import github, plans, vocabulary, work
from sessions.domain.records import EventRecord
from sessions.readmodels import open_sessions
from sessions.readmodels.kept import Kept
from sessions.readmodels.open_sessions import Places
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


# Sessions' work by (id, stream length): a stream's first events never change, so a
# work read at a length holds until the stream grows (a plan view's last attempts,
# closed sessions a forge may still report on, read again only when they did).
WORKS = Kept(bound=20_000)


def works_of(sessions: Sequence[str]) -> dict[str, work.Work | None]:
    """The current `work` of each of `sessions` that exists: one statement for their
    lengths, then a few probes for each not kept at its length."""
    found = {}
    for session_id, length in store.stream_lengths(list(sessions)).items():
        kept = WORKS.get((session_id, length))
        if kept is None:
            kept = (current_work(session_id),)  # a tuple: a session with no work is kept too
            WORKS.put((session_id, length), kept)
        found[session_id] = kept[0]
    return found


def sessions_reached(delivery: github.Delivery, shared: Sequence[str], most: int) -> list[str]:
    """The `most` latest-opened sessions `delivery` reports to (`github.reaches`): those
    whose current work is on its repo and one of its branches, or at its commit."""
    found = []
    for session_id, opened_at in work_rows.sessions_reporting(delivery.branches, delivery.commit):
        now = current_work(session_id)
        if now is not None and github.reaches(delivery, now, opened_at, shared):
            found.append(session_id)
            if len(found) == most:
                break
    return found


def checks_failed_since(session_id: str, status: str | None) -> object:
    """Since when the session, in review, has had red checks at its head, or None."""
    if status != vocabulary.IN_REVIEW:
        return None
    return work.checks_failed_since(status, work_rows.head_and_checks(session_id))


def duplicates(
    sessions: Sequence[str], shared: Sequence[str], places: Places | None = None
) -> dict[str, tuple[str, object]]:
    """Of `sessions`, the unclosed ones working a repo and branch that an earlier-opened
    unclosed session works too: {session: (the earliest such session, since when)}. Repos
    compare case-insensitively; a branch in `shared` is never duplicate work. Every open
    session's place, and since when it holds it, is kept by the open-sessions model
    (`places`, when the caller read it already): judging them asks nothing of the
    database."""
    places = open_sessions.work_marks().places if places is None else places
    held = Counter(found.place for found in places.values())
    twice = {
        here.place
        for session_id in sessions
        if (here := places.get(session_id)) and held[here.place] > 1 and here.place[1] not in shared
    }
    if not twice:
        return {}
    groups: dict[tuple[str, str], list[tuple[object, str]]] = {}
    for session_id, here in places.items():
        if here.place in twice:
            groups.setdefault(here.place, []).append((here.opened, session_id))
    asked, found = set(sessions), {}
    for members in groups.values():
        members.sort()
        first = members[0][1]
        for _, session_id in members[1:]:
            since = places[session_id].since
            if session_id in asked and since is not None:
                found[session_id] = (first, since)
    return found


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
