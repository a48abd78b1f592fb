"""Where the work lands (docs/rules.md): a session's repository, branch, head commit, pull
request and the checks at its head, as pure functions of its `session_work` events.

Like every projection: events in stream order, nothing written, never raising on odd
histories (an imported `pr_url` before any `pr` is passed over), no clock.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple

from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import IN_REVIEW, WORK

FAILURE, PENDING, SUCCESS = "failure", "pending", "success"
MERGED = "merged"
# The attention of a session in review whose checks at its head are red: review waits.
CHECKS_FAILED = "checks_failed"
# The attention of an unclosed session working a branch that an earlier one works too.
DUPLICATE = "duplicate"


class PullRequest(NamedTuple):
    number: int
    url: str | None  # the latest given since this number was given
    state: str | None


class Checks(NamedTuple):
    commit: str  # the session's current commit
    state: str  # failure if any run failed, else pending if any is pending, else success
    runs: dict[str, str]  # each check's latest state at that commit, by name


class Work(NamedTuple):
    repo: str | None
    branch: str | None
    commit: str | None  # the latest given by an event without a check
    pr: PullRequest | None
    checks: Checks | None


def rollup(states: Iterable[str]) -> str:
    """The one mark of several check runs."""
    found = set(states)
    return FAILURE if FAILURE in found else PENDING if PENDING in found else SUCCESS


def _head_after(event: EventRecord, commit: str | None, runs: dict) -> str | None:
    """The head commit after a report: a check run is kept with the commit it ran on
    (in `runs`, by commit) and leaves the head; any other commit moves it."""
    if event.check is not None and event.commit is not None:
        runs.setdefault(event.commit, {})[event.check] = event.check_state or PENDING
        return commit
    return event.commit if event.commit is not None else commit


def work(events: Sequence[EventRecord]) -> Work | None:
    """The session's `work`: None when it has no `session_work`."""
    repo = branch = commit = None
    pr: PullRequest | None = None
    runs: dict[str, dict[str, str]] = {}  # by commit: checks at an older head drop out
    reported = False
    for event in events:
        if event.type != WORK:
            continue
        reported = True
        repo = event.repo if event.repo is not None else repo
        branch = event.branch if event.branch is not None else branch
        commit = _head_after(event, commit, runs)
        if event.pr is not None and (pr is None or pr.number != event.pr):
            pr = PullRequest(event.pr, None, None)  # a different number starts afresh
        if pr is not None:
            pr = pr._replace(
                url=event.pr_url if event.pr_url is not None else pr.url,
                state=event.pr_state if event.pr_state is not None else pr.state,
            )
    if not reported:
        return None
    at_head = runs.get(commit) if commit is not None else None
    checks = (
        Checks(commit, rollup(at_head.values()), dict(at_head))
        if commit is not None and at_head
        else None
    )
    return Work(repo, branch, commit, pr, checks)


def head_report(events: Sequence[EventRecord]) -> EventRecord | None:
    """The report that set the current commit: the latest with a commit and no check."""
    return next(
        (
            e
            for e in reversed(events)
            if e.type == WORK and e.commit is not None and e.check is None
        ),
        None,
    )


def failing_since(events: Sequence[EventRecord]) -> datetime | None:
    """The time of the earliest event since which the checks at the current commit have
    been failing, or None when they are not failing (attention `checks_failed`)."""
    commit, since = None, None
    runs: dict[str, dict[str, str]] = {}
    for event in events:
        if event.type != WORK:
            continue
        commit = _head_after(event, commit, runs)
        at_head = runs.get(commit, {}) if commit is not None else {}
        failing = bool(at_head) and rollup(at_head.values()) == FAILURE
        if not failing:
            since = None
        elif since is None:
            since = event.timestamp
    return since


def checks_failed_since(status: str | None, events: Sequence[EventRecord]) -> datetime | None:
    """Since when a session in review has had red checks at its head (attention
    `checks_failed`), or None. `events` may be only its head's report and the check runs
    at that commit: nothing else bears on it."""
    return failing_since(events) if status == IN_REVIEW else None


def place_since(events: Sequence[EventRecord]) -> datetime | None:
    """The time of the first report after which the session's repo and branch have kept
    their current values (duplicate work's `since`), or None while either is unknown."""
    repo = branch = since = None
    for event in events:
        if event.type != WORK:
            continue
        moved = (event.repo is not None and event.repo != repo) or (
            event.branch is not None and event.branch != branch
        )
        repo = event.repo if event.repo is not None else repo
        branch = event.branch if event.branch is not None else branch
        if moved:
            since = event.timestamp if repo is not None and branch is not None else None
        elif since is None and repo is not None and branch is not None:
            since = event.timestamp
    return since if repo is not None and branch is not None else None


def repo_key(repo: str) -> str:
    """A repo as it compares: case-insensitively, as GitHub's names do."""
    return repo.lower()


def place_key(repo: str, branch: str) -> tuple[str, str]:
    """Where duplicate work is looked for: the repo as it compares, and the branch."""
    return repo_key(repo), branch


def place(found: Work | None, shared: Sequence[str]) -> tuple[str, str] | None:
    """`place_key` of a session's work, or None for no repo or branch, or a branch many
    work on at once (`shared`)."""
    if found is None or found.repo is None or found.branch is None or found.branch in shared:
        return None
    return place_key(found.repo, found.branch)


def merge_note(pr: int, commit: str | None) -> str:
    """The note of the close a merge appends."""
    return f"PR #{pr} merged at {commit}" if commit else f"PR #{pr} merged"
