"""The rules of writing, and the only writes there are: `append_event` for every surface,
`import_stream` for JSONL.

Both check events against the vocabulary and the transition table, then write through
the store (`store.holding`), which holds the stream against other writers; the unique
(session, seq) constraint remains the last line of defence, and a violation there means
another writer won a race, so we retry against the new tail. Refusals are domain errors
with a code and a sentence; each surface (API, forms, commands) says them its own way.
"""

import secrets
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError
from django.utils import timezone

from . import projections, store, vocabulary
from .projections import EventRecord

ACT_ON_ANY_SESSION = "tower.act_on_any_session"
_ATTEMPTS = 20


class Refused(Exception):
    """Base of every refusal: `code` names it for programs, `detail` says it to people."""

    code = "invalid"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class InvalidEvent(Refused):
    """The input breaks the vocabulary. `errors` maps each field to what is wrong with it."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        detail = "; ".join(f"{name} {problem}" for name, problem in errors.items())
        super().__init__(f"Invalid event: {detail}.")


class Forbidden(Refused):
    code = "forbidden"


class UnknownSession(Refused):
    code = "not_found"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"There is no session {session_id!r}.")


class Conflict(Refused):
    """Refused because of the stream's current state, which `session_id` names."""

    def __init__(self, code: str, detail: str, session_id: str) -> None:
        super().__init__(detail)
        self.code = code
        self.session_id = session_id


@dataclass(frozen=True)
class Appended:
    event: EventRecord
    created: bool  # False when an idempotency key repeated an earlier append


def new_session_id() -> str:
    return secrets.token_hex(6)


def may_act(user, session_owner: str | None) -> bool:
    """Whether `user` may append to a session owned by `session_owner`."""
    if not user.is_authenticated:
        return False
    return user.get_username() == session_owner or user.has_perm(ACT_ON_ANY_SESSION)


def _check_inputs(session_id, event_type, fields, expected_seq, idempotency_key):
    errors = {}
    problem = vocabulary.session_id_error(session_id)
    if problem:
        errors["session"] = problem
    errors.update(vocabulary.field_errors(event_type, fields))
    if expected_seq is not None and (
        isinstance(expected_seq, bool) or not isinstance(expected_seq, int) or expected_seq < 0
    ):
        errors["expected_seq"] = "must be a whole number of at least 0"
    if idempotency_key is not None:
        problem = vocabulary.text_error(idempotency_key, vocabulary.IDEMPOTENCY_KEY_MAX)
        if problem:
            errors["idempotency_key"] = problem
    if errors:
        raise InvalidEvent(errors)


def append_event(
    session_id: str,
    event_type: str,
    fields: dict,
    *,
    user,
    expected_seq: int | None = None,
    idempotency_key: str | None = None,
    now: datetime | None = None,
) -> Appended:
    """Append one event to a session's stream, or raise a `Refused` and write nothing.

    `fields` holds the type's own fields (None for an absent optional one); `expected_seq`
    is the last seq the caller saw; a repeated `idempotency_key` of the same actor on the
    same stream returns the event it first appended.

    The checks run in this order: the input; permission; the idempotency key (so that a
    retry of a request that succeeded gets its original answer); `expected_seq`; the
    transition.
    """
    _check_inputs(session_id, event_type, fields, expected_seq, idempotency_key)
    if not user.is_authenticated:
        raise Forbidden("Sign in to append events.")
    fields = {name: value for name, value in fields.items() if value is not None}
    args = (session_id, event_type, fields, user, expected_seq, idempotency_key, now)
    for _ in range(_ATTEMPTS - 1):
        try:
            return _append_in_transaction(*args)
        except IntegrityError:
            continue  # another writer took this seq first: read the new tail, try again
    return _append_in_transaction(*args)


def _append_in_transaction(session_id, *args):
    with store.holding(session_id):
        return _append_to_stream(session_id, *args)


def _append_to_stream(session_id, event_type, fields, user, expected_seq, idempotency_key, now):
    ends = store.stream_ends(session_id)
    actor = user.get_username()
    owner = projections.owner(ends)
    if ends and not may_act(user, owner):
        raise Forbidden(
            f"Only the session's owner ({owner}) or someone allowed "
            "to act on any session may change it."
        )
    if idempotency_key is not None:
        earlier = store.key_event(session_id, actor, idempotency_key)
        if earlier is not None:
            return Appended(earlier, created=False)
    status = projections.status(ends)
    seq = ends[-1].seq if ends else 0
    if not ends and event_type != vocabulary.START:
        raise UnknownSession(session_id)
    if ends and event_type == vocabulary.START:
        raise Conflict(
            "session_exists", f"A session with the id {session_id!r} already exists.", session_id
        )
    if expected_seq is not None and expected_seq != seq:
        raise Conflict(
            "stale_expected_seq",
            f"The session moved on: you expected seq {expected_seq}, but it is at seq {seq}.",
            session_id,
        )
    problem = vocabulary.transition_error(event_type, status)
    if problem:
        raise Conflict("transition_not_allowed", f"Refused: {problem}.", session_id)
    if seq >= vocabulary.MAX_STREAM_EVENTS:
        raise Conflict(
            "stream_full",
            f"The session holds {seq} events, the most one stream may hold; "
            "close it and start a new session.",
            session_id,
        )
    now = now or timezone.now()
    record = EventRecord(
        session_id,
        seq + 1,
        event_type,
        max(now, ends[-1].timestamp) if ends else now,
        actor,
        *(fields.get(name) for name in EventRecord._fields[5:]),
    )
    store.insert(record, idempotency_key)
    return Appended(record, created=True)


class StreamMismatch(Refused):
    code = "exists_differently"


def import_stream(session_id: str, records: list[EventRecord]) -> bool:
    """Store a whole validated stream (from JSONL) in one transaction.

    Returns True when written, False when the session already holds exactly these
    events; raises `StreamMismatch` when it holds different ones.
    """
    records = list(records)
    with store.holding(session_id):
        existing = store.read_stream(session_id)
        if existing:
            if existing == records:
                return False
            raise StreamMismatch(
                f"Session {session_id!r} already exists with different events "
                f"({len(existing)} stored, {len(records)} in the file)."
            )
        store.insert_many(records)
    return True
