"""The answer fields a session's and a plan's answers share: where the work lands (the
branch, the pull request, the checks), what was spent, the budget that binds, and the
paths running nodes hold (the reservations)."""

from typing import Literal

from ninja import Schema
from pydantic import Field

from sessions.domain import budgets, spend, vocabulary, work


class PullRequest(Schema):
    number: int
    url: str | None = Field(description="The latest given since this number was given.")
    state: Literal[vocabulary.PR_STATES] | None  # type: ignore[valid-type]


class Checks(Schema):
    commit: str = Field(
        description="The session's current commit: checks at an older one drop out."
    )
    state: Literal[vocabulary.CHECK_STATES] = Field(  # type: ignore[valid-type]
        description="failure if any run failed, else pending if any is pending, else success."
    )
    runs: dict[str, Literal[vocabulary.CHECK_STATES]] = Field(  # type: ignore[valid-type]
        description="Each check's latest state at that commit, by name."
    )


class Work(Schema):
    repo: str | None
    branch: str | None
    commit: str | None = Field(description="The latest given by a report without a check.")
    pr: PullRequest | None
    checks: Checks | None = Field(description="Null unless some check ran on `commit`.")


class TokenCounts(Schema):
    input: int
    output: int
    cache_read: int
    cache_write: int


class ModelUsage(TokenCounts):
    cost_usd: float | None = Field(description="US dollars, to 6 decimals; null: unpriced.")


class Usage(Schema):
    tokens: TokenCounts = Field(description="Each kind summed over the models.")
    cost_usd: float = Field(description="US dollars over the priced models (0 when none is).")
    unpriced: list[str] = Field(description="The models the price table has no entry for.")
    by_model: dict[str, ModelUsage]


class Budget(Schema):
    scope: Literal[budgets.NODE, budgets.PLAN]  # type: ignore[valid-type]
    limit_usd: float
    spent_usd: float = Field(description="What the node (all attempts) or plan spent.")
    over: bool = Field(description="Spent: claims, starts and reclaims are refused.")


def usage_json(found: spend.Usage | None) -> dict | None:
    """A `domain.spend.Usage` as the `Usage` schema gives it: dollars as JSON numbers
    (each a rounded or summed decimal of at most 6 places, which a float prints back)."""
    if found is None:
        return None
    return {
        "tokens": dict(found.tokens),
        "cost_usd": float(found.cost_usd),
        "unpriced": list(found.unpriced),
        "by_model": {
            model: {
                **dict(zip(spend.KINDS, part[:4], strict=True)),
                "cost_usd": None if part.cost_usd is None else float(part.cost_usd),
            }
            for model, part in found.by_model.items()
        },
    }


def work_json(found: work.Work | None) -> dict | None:
    """A session's `work` (`domain.work.Work`) as the `Work` schema gives it."""
    if found is None:
        return None
    pr, checks = found.pr, found.checks
    return {
        "repo": found.repo,
        "branch": found.branch,
        "commit": found.commit,
        "pr": None if pr is None else {"number": pr.number, "url": pr.url, "state": pr.state},
        "checks": None
        if checks is None
        else {"commit": checks.commit, "state": checks.state, "runs": dict(checks.runs)},
    }


class Reservation(Schema):
    plan: str
    node: str
    session: str = Field(description="The session running the node.")
    owner: str
    paths: list[str] = Field(description="The node's path patterns, relative to the repo.")
    agent: str | None = Field(
        None, description="The agent that started the session (its program and version)."
    )


class Reservations(Schema):
    items: list[Reservation] = Field(description="By plan id, then plan order.")


def reservation_json(found: object) -> dict:
    """A `readmodels.reservations.Reservation` as the `Reservation` schema gives it."""
    return {**found._asdict(), "paths": list(found.paths)}


def budget_json(found: budgets.Budget | None) -> dict | None:
    """The budget binding a node (`domain.budgets.Budget`) as the `Budget` schema gives it."""
    if found is None:
        return None
    return {
        "scope": found.scope,
        "limit_usd": float(found.limit_usd),
        "spent_usd": float(found.spent_usd),
        "over": found.over,
    }
