"""The rules of the v4 event fields' own values: where the work lands (docs/rules.md, "Where
the work lands") and budgets ("Spend"). Pure; `vocabulary` names them with the rest."""

import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

# Where the work lands (docs/rules.md): a `session_work`'s fields, and each one's rule.
WORK_FIELDS = ("repo", "branch", "commit", "pr", "pr_url", "pr_state", "check", "check_state")
PR_STATES = ("open", "merged", "closed")
CHECK_STATES = ("pending", "success", "failure")
REPO_MAX, BRANCH_MAX, PR_URL_MAX, CHECK_MAX, PR_MAX = 200, 255, 500, 200, 10**9
REPO_PATTERN = re.compile(r"[A-Za-z0-9._-]+/[A-Za-z0-9._-]+")
COMMIT_PATTERN = re.compile(r"[0-9a-f]{40}")
_BRANCH_REFUSED = re.compile(r"[\s\x00-\x1f\x7f]|\.\.")
_URL_PATTERN = re.compile(r"https?://[^\s\x00-\x1f\x7f]+")

BUDGET_MAX = 10**6  # US dollars: a budget is more than 0, at most this, in whole cents


def work_value_error(name: str, value: object) -> str | None:
    """A `session_work` field's own rule (docs/rules.md, "Where the work lands"); `check` is
    a line of text (`vocabulary.text_error`)."""
    if name == "pr":
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= PR_MAX:
            return f"must be a whole number from 1 to {PR_MAX}"
        return None
    if not isinstance(value, str):
        return "must be text"
    if name == "repo":
        if len(value) > REPO_MAX or not REPO_PATTERN.fullmatch(value):
            return (
                f"must be owner/name: 1–{REPO_MAX} characters of A–Z, a–z, 0–9, '.', '_' "
                "and '-', with one '/'"
            )
    elif name == "branch":
        if not 1 <= len(value) <= BRANCH_MAX:
            return f"must be 1–{BRANCH_MAX} characters"
        if _BRANCH_REFUSED.search(value) or value.startswith(("-", "/", "refs/heads/")):
            return (
                "must be a git branch name without refs/heads/: no white space, control "
                "character or '..', not starting with '-' or '/'"
            )
    elif name == "commit":
        if not COMMIT_PATTERN.fullmatch(value):
            return "must be a full commit id: 40 lowercase hexadecimal digits"
    elif name == "pr_url":
        if len(value) > PR_URL_MAX or not _URL_PATTERN.fullmatch(value):
            return f"must be an http or https URL of at most {PR_URL_MAX} characters"
    elif name in ("pr_state", "check_state"):
        allowed = PR_STATES if name == "pr_state" else CHECK_STATES
        if value not in allowed:
            return f"must be one of {', '.join(allowed)}"
    return None


def work_errors(fields: dict[str, object]) -> dict[str, str]:
    """The rules between a `session_work`'s fields (a PR known from before is the
    rules' to check: it depends on the stream)."""
    given = {name for name in WORK_FIELDS if fields.get(name) is not None}
    if not given:
        return {"repo": f"a session_work gives at least one of {', '.join(WORK_FIELDS)}"}
    errors = {}
    for one, other in (("check", "check_state"), ("check_state", "check")):
        if one in given and other not in given:
            errors[other] = f"is required with {one}: give check and check_state together"
    if "check" in given and "commit" not in given:
        errors["commit"] = "is required with check: the commit the check ran on"
    return errors


def budget_error(value: object) -> str | None:
    """Why `value` is not a budget in US dollars, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"must be a number of US dollars, more than 0 and at most {BUDGET_MAX:,}"
    if not (math.isfinite(value) and 0 < value <= BUDGET_MAX):
        return f"must be more than 0 and at most {BUDGET_MAX:,} US dollars"
    exponent = dollars(value).as_tuple().exponent  # (a whole number: the value is finite)
    if isinstance(exponent, int) and exponent < -2:
        return "must have at most 2 decimals (whole cents)"
    return None


def dollars(value: int | float | Decimal) -> Decimal:
    """A budget's JSON number as an exact decimal (a float's shortest text, which is the
    number as it was written)."""
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def node_map_error(
    value: object,
    rule: Callable[[Any], str | None],
    what: str,
    key_error: Callable[[Any], str | None],
    limit: int,
) -> str | None:
    """An amend's `{key: value or null}`: at least one node, each key an id."""
    if not isinstance(value, dict) or not value:
        return f"must be an object of node keys to {what} or null, naming at least one node"
    if len(value) > limit:
        return f"may name at most {limit} nodes (got {len(value)})"
    for key, given in value.items():
        problem = key_error(key)
        if problem is None and given is not None:
            problem = rule(given)
        if problem:
            return f"[{key!r}] {problem}"
    return None
