"""The event vocabulary of DESIGN.md: types, their fields and limits, statuses, transitions.

Pure Python, shared by the append function, the JSONL codec, the forms and the API, so
that every surface refuses exactly the same inputs with the same words.
"""

import re

START = "session_start"
BLOCK = "session_block"
UNBLOCK = "session_unblock"
REVIEW = "session_review"
CLOSE = "session_close"
EVENT_TYPES = (START, BLOCK, UNBLOCK, REVIEW, CLOSE)

ACTIVE = "active"
BLOCKED = "blocked"
IN_REVIEW = "in_review"
CLOSED = "closed"
STATUSES = (ACTIVE, BLOCKED, IN_REVIEW, CLOSED)

STATUS_LABELS = {ACTIVE: "Active", BLOCKED: "Blocked", IN_REVIEW: "In review", CLOSED: "Closed"}

# Each type's own fields, in the order JSONL writes them.
FIELDS = {
    START: ("title", "note"),
    BLOCK: ("reason",),
    UNBLOCK: ("note",),
    REVIEW: ("note",),
    CLOSE: ("note",),
}
REQUIRED_FIELDS = {START: ("title",), BLOCK: ("reason",)}
MAX_LENGTH = {"title": 200, "reason": 2000, "note": 2000}
TEXT_FIELDS = tuple(MAX_LENGTH)

STATUS_AFTER = {START: ACTIVE, BLOCK: BLOCKED, UNBLOCK: ACTIVE, REVIEW: IN_REVIEW, CLOSE: CLOSED}

# `None` stands for "no events yet".
ALLOWED_FROM = {
    START: (None,),
    BLOCK: (ACTIVE, BLOCKED, IN_REVIEW),
    UNBLOCK: (BLOCKED,),
    REVIEW: (ACTIVE,),
    CLOSE: (ACTIVE, BLOCKED, IN_REVIEW),
}

# The most events one stream may hold: past it an append is refused (close the session
# and start another). Every request's cost is bounded apart from this (pagination,
# summarised blockers), but a stream is also a file on export and a replay on import.
MAX_STREAM_EVENTS = 100_000

# What one request may ask for or be given, so that its cost is bounded.
MAX_BLOCKERS_SHOWN = 20  # a view lists the latest open blocks and counts them all
MAX_EVENTS_PAGE = 200  # events per page of a stream's events or timeline
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
MAX_PAGE = 10**6
MAX_MINUTES = 10**6  # per-request thresholds, in minutes
IDEMPOTENCY_KEY_MAX = 255

SESSION_ID_MAX = 64
SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
ACTOR_MAX = 150


# Characters that text may not hold, as one character class that both Python's `re` and
# JSON Schema (ECMA 262) read the same way: control characters (tab and newline are
# allowed in notes, not in titles), zero-width characters and bidirectional controls,
# which would let a title spoof what the board shows. (Lone surrogates, which no UTF-8
# text holds, are refused apart: JSON Schema and pydantic's regex engine cannot say them.)
_INVISIBLE = (
    r"\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    r"\u2066-\u206f\ufeff\ufff9-\ufffb"
)
_FORBIDDEN = {
    "line": r"\u0000-\u001f" + _INVISIBLE,  # titles and ids of things: one line
    "text": r"\u0000-\u0008\u000b-\u001f" + _INVISIBLE,  # notes and reasons
}
MULTILINE_FIELDS = ("reason", "note")


def text_pattern(kind: str) -> str:
    """The regular expression of acceptable text: at least one character that is not
    white space, and none of the forbidden characters. Also the API schema's pattern."""
    forbidden = _FORBIDDEN[kind]
    return f"^[^{forbidden}]*[^\\s{forbidden}][^{forbidden}]*$"


_TEXT = {kind: re.compile(text_pattern(kind)) for kind in _FORBIDDEN}
_FORBIDDEN_CHARACTER = {kind: re.compile(f"[{chars}]") for kind, chars in _FORBIDDEN.items()}


def text_error(value, max_length, kind="line"):
    """Why `value` is not an acceptable text field, or None."""
    if not isinstance(value, str):
        return "must be text"
    if len(value) > max_length:
        return f"must be at most {max_length} characters (got {len(value)})"
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        return "must be valid Unicode text"
    if _TEXT[kind].fullmatch(value):
        return None
    bad = _FORBIDDEN_CHARACTER[kind].search(value)
    if bad:
        return f"must not contain control or invisible characters (found U+{ord(bad.group()):04X})"
    return "must not be empty"


def session_id_error(session_id):
    """Why `session_id` is not a valid session id, or None."""
    if not isinstance(session_id, str):
        return "must be text"
    if not 1 <= len(session_id) <= SESSION_ID_MAX:
        return f"must be 1–{SESSION_ID_MAX} characters"
    if not SESSION_ID_PATTERN.fullmatch(session_id):
        return "may hold only A–Z, a–z, 0–9, '.', '_' and '-', and must not start with '.' or '-'"
    return None


def actor_error(actor):
    """Why `actor` is not an acceptable actor name, or None."""
    return text_error(actor, ACTOR_MAX)


def field_errors(event_type, fields):
    """Map each offending field to the reason it is refused; empty when `fields` is valid.

    A field of the type set to None counts as absent; any other field is an error,
    whatever its value.
    """
    if event_type not in FIELDS:
        return {"type": f"must be one of {', '.join(EVENT_TYPES)}"}
    allowed = FIELDS[event_type]
    errors = {}
    for name in fields:
        if name not in allowed:
            others = ", ".join(allowed)
            errors[name] = f"is not a field of {event_type} (its fields: {others})"
    for name in allowed:
        value = fields.get(name)
        if value is None:
            if name in REQUIRED_FIELDS.get(event_type, ()):
                errors[name] = f"is required for {event_type}"
            continue
        kind = "text" if name in MULTILINE_FIELDS else "line"
        problem = text_error(value, MAX_LENGTH[name], kind)
        if problem:
            errors[name] = problem
    return errors


def transition_error(event_type, current_status):
    """Why `event_type` may not follow `current_status`, or None when it may."""
    if current_status in ALLOWED_FROM[event_type]:
        return None
    if current_status is None:
        return "the session has no events yet; it must begin with session_start"
    if event_type == START:
        return "the session already exists"
    if current_status == CLOSED:
        return "the session is closed; nothing can be appended after session_close"
    return f"{event_type} is not allowed while the session is {current_status}"
