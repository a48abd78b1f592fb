"""The rules of text an event may carry, named the same everywhere: acceptable text (one
line, or several), ids, actors, and lists of items each checked by a rule. Pure; the
vocabulary names each field's rule with these (`vocabulary.value_error`)."""

import re
from collections.abc import Callable
from typing import Any

SESSION_ID_MAX = 64
SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
ACTOR_MAX = 150


# Characters that text may not hold, as one character class that both Python's `re` and
# JSON Schema (ECMA 262) read the same way: control characters (tab and newline are
# allowed in notes, not in titles), invisible format characters and bidirectional
# controls, which would let a title spoof what the board shows. The joiners U+200C and
# U+200D are text (emoji sequences such as 👨‍💻, Persian and Indic scripts need them).
# (Lone surrogates, which no UTF-8 text holds, are refused apart: JSON Schema and
# pydantic's regex engine cannot say them.)
_INVISIBLE = (
    r"\u007f-\u009f\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064"
    r"\u2066-\u206f\ufeff\ufff9-\ufffb"
)
_FORBIDDEN = {
    "line": r"\u0000-\u001f" + _INVISIBLE,  # titles and ids of things: one line
    "text": r"\u0000-\u0008\u000b-\u001f" + _INVISIBLE,  # notes and reasons
}


def text_pattern(kind: str) -> str:
    """The regular expression of acceptable text: at least one character that is not
    white space, and none of the forbidden characters. Also the API schema's pattern."""
    forbidden = _FORBIDDEN[kind]
    return f"^[^{forbidden}]*[^\\s{forbidden}][^{forbidden}]*$"


_TEXT = {kind: re.compile(text_pattern(kind)) for kind in _FORBIDDEN}
_SURROGATE = re.compile("[\ud800-\udfff]")  # one search, not a Python step per character
_FORBIDDEN_CHARACTER = {kind: re.compile(f"[{chars}]") for kind, chars in _FORBIDDEN.items()}


def text_error(value: object, max_length: int, kind: str = "line") -> str | None:
    """Why `value` is not an acceptable text field, or None."""
    if not isinstance(value, str):
        return "must be text"
    if len(value) > max_length:
        return f"must be at most {max_length} characters (got {len(value)})"
    if _SURROGATE.search(value):
        return "must be valid Unicode text"
    if _TEXT[kind].fullmatch(value):
        return None
    bad = _FORBIDDEN_CHARACTER[kind].search(value)
    if bad:
        return f"must not contain control or invisible characters (found U+{ord(bad.group()):04X})"
    return "must not be empty"


def session_id_error(session_id: object) -> str | None:
    """Why `session_id` is not a valid session id, or None."""
    if not isinstance(session_id, str):
        return "must be text"
    if not 1 <= len(session_id) <= SESSION_ID_MAX:
        return f"must be 1–{SESSION_ID_MAX} characters"
    if not SESSION_ID_PATTERN.fullmatch(session_id):
        return "may hold only A–Z, a–z, 0–9, '.', '_' and '-', and must not start with '.' or '-'"
    return None


def actor_error(actor: object) -> str | None:
    """Why `actor` is not an acceptable actor name, or None."""
    return text_error(actor, ACTOR_MAX)


def id_list_error(value: object, what: str, limit: int) -> str | None:
    """A list of ids, each once."""
    problem = list_error(value, session_id_error, what, limit)
    if problem is None and isinstance(value, list) and len(set(value)) != len(value):
        return f"must not repeat {what}"
    return problem


def list_error(
    value: object, item_error: Callable[[Any], str | None], what: str, limit: int
) -> str | None:
    if not isinstance(value, list) or not value:
        return f"must be a non-empty list of {what}"
    if len(value) > limit:
        return f"may hold at most {limit} {what} (got {len(value)})"
    for index, item in enumerate(value):
        problem = item_error(item)
        if problem:
            return f"[{index}] {problem}"
    return None
