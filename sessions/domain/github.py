"""GitHub's webhook deliveries as `session_work` reports (docs/rules.md, "Where the work
lands", the forge integration): the signature they carry, and what each event says of which
branch or commit. Pure: the payloads are GitHub's documented shapes, read defensively (a
value outside the field rules is cut or left out, never a refusal of the whole delivery)."""

import hashlib
import hmac
from collections.abc import Collection
from datetime import datetime
from typing import Any, NamedTuple

from sessions.domain import moments, vocabulary
from sessions.domain.work import MERGED, Work, repo_key

MAX_BODY_BYTES = 5 * 1024 * 1024
PULL_REQUEST_ACTIONS = ("opened", "reopened", "synchronize", "closed", "edited")
GREEN_CONCLUSIONS = ("success", "neutral", "skipped")


class MissingField(ValueError):
    """The delivery lacks a field its event needs (400)."""


class Delivery(NamedTuple):
    """What one delivery reports, and about which sessions: those whose current repo and
    branch are (`repo`, one of `branches`), and, for checks, those at `commit`."""

    fields: dict  # the session_work's fields
    repo: str | None
    branches: tuple[str, ...]
    commit: str | None  # a check's: the sessions whose current commit it is
    # A pull_request delivery's number: it never reaches a session on a shared branch.
    pull_request: int | None = None
    merged_at: datetime | None = None  # a merge's moment, as GitHub gave it


def reaches(delivery: Delivery, now: Work, opened_at: datetime, shared: Collection[str]) -> bool:
    """Whether `delivery` reports to a session whose current work is `now`, opened at
    `opened_at` (`shared`: the branches many work on at once). By its repo and branch (a
    pull request's never on a shared branch: a PR from `main` closes nobody's work), or
    at its commit; and a merge only to a session that named that PR already, or that
    opened before the merge (a new session on an old PR's branch is new work)."""
    on_branch = (
        delivery.repo is not None
        and now.repo is not None
        and repo_key(now.repo) == repo_key(delivery.repo)
        and now.branch in delivery.branches
        and not (delivery.pull_request is not None and now.branch in shared)
    )
    if not on_branch and (delivery.commit is None or now.commit != delivery.commit):
        return False
    if delivery.fields.get("pr_state") != MERGED:
        return True
    if now.pr is not None and now.pr.number == delivery.pull_request:
        return True
    return delivery.merged_at is not None and opened_at < delivery.merged_at


def signature_matches(secret: str, body: bytes, header: str | None) -> bool:
    """Whether `header` is `sha256=` and the HMAC-SHA256 of the raw body with the secret,
    compared in constant time."""
    if not header:
        return False
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header.strip().encode())


def _get(payload: object, *path: str, within: str = "") -> Any:
    """The value at `path` in `payload` (itself at `within` in the delivery): whatever
    JSON holds there, for the caller to check."""
    for name in path:
        if not isinstance(payload, dict) or name not in payload:
            named = ".".join(filter(None, [within, *path]))
            raise MissingField(f"the delivery has no {named}")
        payload = payload[name]
    return payload


def _text(value: object, limit: int) -> str | None:
    """A name cut to `limit` characters, None when it is not text a field may hold."""
    if not isinstance(value, str):
        return None
    cut = value[:limit]
    return cut if vocabulary.text_error(cut, limit) is None else None


def _valid(name: str, value: object) -> Any:
    """`value` when it keeps the rule of the field `name`, else None."""
    return value if value is not None and vocabulary.value_error(name, value) is None else None


def check_state(status: object, conclusion: object) -> str:
    """A check run's or suite's state: pending until completed, then by conclusion."""
    if status != "completed":
        return "pending"
    return "success" if conclusion in GREEN_CONCLUSIONS else "failure"


def status_state(state: object) -> str:
    """A commit status's state: success and pending as they are; error, failure and
    anything else (not text included) failure."""
    return state if isinstance(state, str) and state in ("success", "pending") else "failure"


def delivery(event: str, payload: dict) -> Delivery | None:
    """What the delivery of `event` reports; None for an event or action that reports
    nothing; `MissingField` when it lacks what its event needs."""
    if event == "pull_request":
        if _get(payload, "action") not in PULL_REQUEST_ACTIONS:
            return None
        pr = _get(payload, "pull_request")
        head = _get(pr, "head", within="pull_request")
        head_repo = _get(head, "repo", within="pull_request.head")
        repo = head_repo.get("full_name") if isinstance(head_repo, dict) else None  # fork gone
        action = payload["action"]
        # Only the close that merged reports a merge: an `edited` delivery of a PR merged
        # long ago still says `merged: true`.
        merged = action == "closed" and pr.get("merged") is True
        commit = pr.get("merge_commit_sha") if merged else head.get("sha")
        fields = {
            "pr": _valid("pr", _get(pr, "number", within="pull_request")),
            "pr_url": _valid("pr_url", pr.get("html_url")),
            "pr_state": _pr_state(action, merged, pr.get("state")),
            "commit": _valid("commit", commit),
        }
        if fields["pr"] is None:
            raise MissingField("the delivery's pull_request.number is not a pull request number")
        branch = _get(head, "ref", within="pull_request.head")
        branches = (branch,) if isinstance(branch, str) else ()
        merged_at = _moment(pr.get("merged_at")) if merged else None
        return Delivery(_present(fields), repo, branches, None, fields["pr"], merged_at)
    if event in ("check_suite", "check_run"):
        found = _get(payload, event)
        suite = found if event == "check_suite" else _get(found, "check_suite", within=event)
        name = (
            _get(found, "app", "name", within=event)
            if event == "check_suite"
            else _get(found, "name", within=event)
        )
        return _check(
            payload,
            _get(found, "head_sha", within=event),
            name,
            check_state(_get(found, "status", within=event), found.get("conclusion")),
            (suite.get("head_branch") if isinstance(suite, dict) else None,),
        )
    if event == "status":
        listed = _get(payload, "branches")
        if not isinstance(listed, list):
            raise MissingField("the delivery's branches is not a list")
        names = tuple(b.get("name") for b in listed if isinstance(b, dict))
        return _check(
            payload,
            _get(payload, "sha"),
            _get(payload, "context"),
            status_state(_get(payload, "state")),
            names,
        )
    return None


def _pr_state(action: str, merged: bool, state: object) -> str | None:
    """What a pull_request delivery says of the PR's state: merged or closed by the
    close itself; otherwise open, or nothing (an edit of a closed PR says no more)."""
    if merged:
        return MERGED
    if action == "closed":
        return "closed"
    return "open" if state == "open" else None


def _moment(value: object) -> datetime | None:
    try:
        return moments.moment(value)
    except ValueError:
        return None  # no moment GitHub gave: only a session naming the PR hears of it


def _check(
    payload: dict, sha: object, name: object, state: str, branches: tuple
) -> Delivery | None:
    commit, check = _valid("commit", sha), _text(name, vocabulary.CHECK_MAX)
    if commit is None or check is None:
        return None  # nothing a session_work may say: unmatched
    repo = _get(payload, "repository", "full_name")
    fields = {"commit": commit, "check": check, "check_state": state}
    named = tuple(b for b in branches if isinstance(b, str))
    return Delivery(fields, repo if isinstance(repo, str) else None, named, commit)


def _present(fields: dict) -> dict:
    return {name: value for name, value in fields.items() if value is not None}
