"""The checked request fields that several requests share (budgets, path patterns,
repositories, a path) and the reservations' query: each checked by the
vocabulary's own rule, in its words."""

from typing import Annotated

from ninja import Schema
from pydantic import AfterValidator, ConfigDict, Field

from sessions.domain import paths as space
from sessions.domain import vocabulary

STRICT = ConfigDict(extra="forbid")  # a request's unknown field is refused, never dropped


def checked_by(rule: object) -> AfterValidator:
    """The vocabulary's own rule of a value, as pydantic runs it (one wording for all)."""

    def check(value: object) -> object:
        problem = rule(value)
        if problem:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


Budget = Annotated[
    float,
    Field(
        strict=True,
        gt=0,
        le=vocabulary.BUDGET_MAX,
        description="US dollars, more than 0, at most 10⁶, at most 2 decimals.",
        json_schema_extra={"multipleOf": 0.01},
    ),
    checked_by(vocabulary.budget_error),
]
Pattern = Annotated[
    str,
    Field(min_length=1, max_length=space.PATTERN_MAX, json_schema_extra={"pattern": space.SHAPE}),
    checked_by(space.pattern_error),
]
Patterns = Annotated[
    list[Pattern],
    Field(
        min_length=1,
        max_length=space.PATTERNS_MAX,
        description="Glob patterns relative to the plan's repo: `*` and `?` within a segment, "
        "`**` for any segments; a pattern without a wildcard covers its folder.",
    ),
]
Repo = Annotated[
    str,
    Field(
        max_length=vocabulary.REPO_MAX,
        pattern=f"^{vocabulary.REPO_PATTERN.pattern}$",
        description="owner/name",
    ),
]


Path = Annotated[
    str,
    Field(min_length=1, max_length=space.PATH_MAX, json_schema_extra={"pattern": space.SHAPE}),
    checked_by(space.path_error),
]


class ReservationQuery(Schema):
    model_config = STRICT
    repo: Repo = Field(description="owner/name, compared case-insensitively.")
    path: Path | None = Field(None, description="A path relative to the repo's root: who holds it.")
