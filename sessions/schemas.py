"""The agent API's shapes, defined once: pydantic schemas that validate requests, write
the OpenAPI document and shape the JSON answers (and, later, the MCP tools' arguments).

Every limit comes from `vocabulary`, so a request the schema admits is one the rules
accept, unless the stream's state refuses it (403, 404, 409).
"""

from datetime import datetime
from typing import Annotated, Literal

from ninja import Schema
from pydantic import BeforeValidator, ConfigDict, Field, PlainSerializer, WithJsonSchema

from . import jsonl, vocabulary

_STRICT = ConfigDict(extra="forbid")


def text(max_length: int, kind: str = "line", **extra) -> object:
    """A text field of the vocabulary: non-blank, no control or invisible characters."""
    return Annotated[
        str,
        Field(
            min_length=1,
            max_length=max_length,
            pattern=vocabulary.text_pattern(kind),
            **extra,
        ),
    ]


SessionId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=vocabulary.SESSION_ID_MAX,
        pattern=f"^{vocabulary.SESSION_ID_PATTERN.pattern}$",
        description="1–64 of A–Z a–z 0–9 . _ -, not starting with . or -",
    ),
]
Title = text(vocabulary.MAX_LENGTH["title"])
Reason = text(vocabulary.MAX_LENGTH["reason"], "text")
Note = text(vocabulary.MAX_LENGTH["note"], "text")
IdempotencyKey = text(
    vocabulary.IDEMPOTENCY_KEY_MAX,
    description="A repeated key of the same actor on the same session returns the event "
    "it first appended and appends nothing.",
)


def json_integer(value: object) -> object:
    """JSON Schema's integer: 1 and 1.0, but not false, "1" or 1.5 (pydantic's lax mode
    would take the first two, its strict mode would refuse 1.0)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a whole number")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("must be a whole number")
        return int(value)
    return value


ExpectedSeq = Annotated[
    int,
    Field(
        ge=0,
        le=vocabulary.MAX_STREAM_EVENTS,
        description="The last seq you saw; if the stream moved on, the append is refused (409).",
    ),
    BeforeValidator(json_integer),
]
Timestamp = Annotated[
    datetime,
    PlainSerializer(jsonl.format_timestamp, return_type=str),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
SearchText = text(200)
Minutes = Annotated[int, Field(ge=0, le=vocabulary.MAX_MINUTES)]


# Requests ----------------------------------------------------------------------------


class StartSession(Schema):
    model_config = _STRICT
    id: SessionId | None = Field(None, description="Made by the server when absent.")
    title: Title
    note: Note | None = None


class BlockEvent(Schema):
    model_config = _STRICT
    type: Literal["session_block"]
    reason: Reason
    expected_seq: ExpectedSeq | None = None


class UnblockEvent(Schema):
    model_config = _STRICT
    type: Literal["session_unblock"]
    note: Note | None = None
    expected_seq: ExpectedSeq | None = None


class ReviewEvent(Schema):
    model_config = _STRICT
    type: Literal["session_review"]
    note: Note | None = None
    expected_seq: ExpectedSeq | None = None


class CloseEvent(Schema):
    model_config = _STRICT
    type: Literal["session_close"]
    note: Note | None = None
    expected_seq: ExpectedSeq | None = None


AppendEvent = Annotated[
    BlockEvent | UnblockEvent | ReviewEvent | CloseEvent, Field(discriminator="type")
]


class SessionFilters(Schema):
    model_config = _STRICT
    status: Literal[vocabulary.STATUSES] | None = None  # type: ignore[valid-type]
    owner: Annotated[str, Field(max_length=vocabulary.ACTOR_MAX, pattern=r"^[^\u0000]*$")] = ""
    q: Annotated[str, Field(max_length=200, pattern=r"^[^\u0000]*$")] = Field(
        "", description="Text in the title or id."
    )
    stale: bool | None = None
    page: Annotated[int, Field(ge=1, le=vocabulary.MAX_PAGE)] = 1
    page_size: Annotated[int, Field(ge=1, le=vocabulary.MAX_PAGE_SIZE)] = (
        vocabulary.DEFAULT_PAGE_SIZE
    )
    stale_after: Minutes | None = Field(
        None, description="Staleness threshold in minutes (default: the server's setting)."
    )


class ViewOptions(Schema):
    model_config = _STRICT
    stale_after: Minutes | None = Field(
        None, description="Staleness threshold in minutes (default: the server's setting)."
    )


class EventPage(Schema):
    model_config = _STRICT
    after: Annotated[int, Field(ge=0, le=vocabulary.MAX_STREAM_EVENTS)] = Field(
        0, description="Give the events with a seq above this one."
    )
    limit: Annotated[int, Field(ge=1, le=vocabulary.MAX_EVENTS_PAGE)] = vocabulary.MAX_EVENTS_PAGE


# Answers ------------------------------------------------------------------------------


class Blocker(Schema):
    reason: str
    timestamp: Timestamp
    actor: str
    seq: int


class Session(Schema):
    id: str
    title: str | None
    owner: str | None
    status: Literal[vocabulary.STATUSES] | None  # type: ignore[valid-type]
    stale: bool
    blockers: list[Blocker] = Field(
        description=f"The open blocks, oldest first: the latest {vocabulary.MAX_BLOCKERS_SHOWN} "
        "when there are more (`blocker_count` has them all)."
    )
    blocker_count: int
    next_action: str | None
    opened_at: Timestamp | None
    last_event_at: Timestamp | None
    closed_at: Timestamp | None
    seq: int


class Event(Schema):
    """An event in the JSONL key order; a type's absent optional fields are left out."""

    session: str
    seq: int
    type: Literal[vocabulary.EVENT_TYPES]  # type: ignore[valid-type]
    timestamp: Timestamp
    actor: str
    title: str | None = Field(None, json_schema_extra={"type": "string"})
    reason: str | None = Field(None, json_schema_extra={"type": "string"})
    note: str | None = Field(None, json_schema_extra={"type": "string"})


class Appended(Schema):
    event: Event
    session: Session


class SessionList(Schema):
    items: list[Session]
    next: str | None


class EventList(Schema):
    items: list[Event]
    next: str | None


class Error(Schema):
    error: str
    detail: str
    fields: dict[str, str] | None = Field(None, json_schema_extra={"type": "object"})
    session: Session | None = None


def _plain(value: object) -> object:
    return jsonl.format_timestamp(value) if isinstance(value, datetime) else value


def _blockers_json(view: object) -> list[dict]:
    return [
        {name: _plain(getattr(b, name)) for name in Blocker.model_fields} for b in view.blockers
    ]


def session_json(view: object) -> dict:
    """A `projections.SessionView` as the `Session` schema gives it, field for field.

    Read straight off the view by the schema's own field list: validating the view
    through pydantic cost a sixth of an append request (bench/RESULTS.md)."""
    return {
        name: _blockers_json(view) if name == "blockers" else _plain(getattr(view, name))
        for name in Session.model_fields
    }


def event_json(event: object) -> dict:
    """An event as the API and JSONL give it (`jsonl.event_dict` is the one shape)."""
    return jsonl.event_dict(event)
