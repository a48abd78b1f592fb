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

SESSION_ID_MAX = 64
SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
ACTOR_MAX = 150


def text_error(value, max_length):
    """Why `value` is not an acceptable text field, or None."""
    if not isinstance(value, str):
        return "must be text"
    if not value.strip():
        return "must not be empty"
    if len(value) > max_length:
        return f"must be at most {max_length} characters (got {len(value)})"
    if "\x00" in value:
        return "must not contain NUL characters"
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        return "must be valid Unicode text"
    return None


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

    `fields` holds the type's own fields only; a field set to None counts as absent.
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
        problem = text_error(value, MAX_LENGTH[name])
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
