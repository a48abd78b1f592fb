"""The only writes there are: `append_event` for every surface, `import_stream` for JSONL.

Both check events against the vocabulary and the transition table before inserting, and
both insert inside one transaction that holds the session's stream against other
writers: SQLite takes its write lock when the transaction begins (IMMEDIATE), after the
threads of one process have queued for it; PostgreSQL takes a per-session advisory lock.
The unique (session, seq) constraint remains the last line of defence; a violation there
means another writer won a race, and we retry.
"""

import fcntl
import os
import secrets
import threading
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from . import projections, vocabulary
from .models import Event, aware_utc
from .projections import EventRecord

ACT_ON_ANY_SESSION = "tower.act_on_any_session"
IDEMPOTENCY_KEY_MAX = 255
_ATTEMPTS = 20


class AppendError(Exception):
    """Base of every refusal. `status_code` and `code` say how surfaces report it."""

    status_code = 400
    code = "invalid"

    def __init__(self, detail):
        super().__init__(detail)
        self.detail = detail


class InvalidEvent(AppendError):
    """The input breaks the vocabulary. `errors` maps each field to what is wrong with it."""

    def __init__(self, errors):
        self.errors = errors
        detail = "; ".join(f"{name} {problem}" for name, problem in errors.items())
        super().__init__(f"Invalid event: {detail}.")


class Forbidden(AppendError):
    status_code = 403
    code = "forbidden"


class UnknownSession(AppendError):
    status_code = 404
    code = "not_found"

    def __init__(self, session_id):
        super().__init__(f"There is no session {session_id!r}.")


class Conflict(AppendError):
    """Refused because of the stream's current state; `seq` and `status` describe it."""

    status_code = 409

    def __init__(self, code, detail, session_id, status, seq):
        super().__init__(detail)
        self.code = code
        self.session_id = session_id
        self.status = status
        self.seq = seq


@dataclass(frozen=True)
class Appended:
    event: Event
    created: bool  # False when an idempotency key repeated an earlier append


def new_session_id():
    return secrets.token_hex(6)


def may_act(user, session_owner):
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
        problem = vocabulary.text_error(idempotency_key, IDEMPOTENCY_KEY_MAX)
        if problem:
            errors["idempotency_key"] = problem
    if errors:
        raise InvalidEvent(errors)


# SQLite has one writer at a time. Writers queue for it here rather than in SQLite's busy
# handler, which polls in growing sleeps (1, 2, 5, 10 ms…): threads of one process on a
# lock, processes (gunicorn workers) on an exclusive lock of a file beside the database,
# which the kernel hands to the next waiter as soon as it is released.
_SQLITE_THREADS = threading.Lock()
_sqlite_lock_files = {}


def _sqlite_lock_file():
    """This process's open lock file for the database (opened anew after a fork)."""
    path = f"{connection.settings_dict['NAME']}.writers"
    key = (os.getpid(), path)
    if key not in _sqlite_lock_files:
        _sqlite_lock_files[key] = open(path, "a")  # noqa: SIM115 (kept open: it holds the lock)
    return _sqlite_lock_files[key]


@contextmanager
def _sqlite_writer_turn():
    with _SQLITE_THREADS:
        lock_file = _sqlite_lock_file()
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)


@contextmanager
def _writing(session_id):
    """A transaction that holds the session's stream against every other writer."""
    queue = _sqlite_writer_turn() if connection.vendor == "sqlite" else nullcontext()
    with queue, transaction.atomic():
        if connection.vendor == "postgresql":
            # The transaction id is taken before any event id, which is what lets
            # readers tell when no lower event id can still commit (`open_sessions`).
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0)), pg_current_xact_id()",
                    [session_id],
                )
        yield


# The append hot path runs its statements as plain SQL: building them through the
# ORM cost three quarters of an append's time (bench/append_inprocess.py, before/after in
# bench/RESULTS.md). The status and owner need only the stream's first and last events.
_ENDS_SQL = (
    "SELECT seq, type, timestamp, actor FROM tower_event WHERE session = %s"
    " AND (seq = 1 OR seq = (SELECT MAX(seq) FROM tower_event WHERE session = %s))"
    " ORDER BY seq"
)
_KEY_SQL = "SELECT id FROM tower_event WHERE session = %s AND idempotency_key = %s"
_INSERT_SQL = (
    "INSERT INTO tower_event"
    " (session, seq, type, timestamp, actor, title, reason, note, idempotency_key)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id"
)
_INSERTED_FIELDS = (
    "id",
    "session",
    "seq",
    "type",
    "timestamp",
    "actor",
    "title",
    "reason",
    "note",
    "idempotency_key",
)


def _stream_ends(cursor, session_id):
    """The stream's first and last events (one when they are the same; none if empty)."""
    cursor.execute(_ENDS_SQL, [session_id, session_id])
    return [
        EventRecord(session_id, seq, event_type, aware_utc(timestamp), actor)
        for seq, event_type, timestamp, actor in cursor.fetchall()
    ]


def _insert(cursor, values):
    """Insert one event from its values in `_INSERTED_FIELDS` order (without the id)."""
    params = [
        connection.ops.adapt_datetimefield_value(value) if name == "timestamp" else value
        for name, value in zip(_INSERTED_FIELDS[1:], values, strict=True)
    ]
    cursor.execute(_INSERT_SQL, params)
    return Event.from_db(connection.alias, _INSERTED_FIELDS, [cursor.fetchone()[0], *values])


def append_event(
    session_id,
    event_type,
    fields,
    *,
    user,
    expected_seq=None,
    idempotency_key=None,
    now=None,
):
    """Append one event to a session's stream, or raise an `AppendError` and write nothing.

    `fields` holds the type's own fields (title, reason, note); `expected_seq` is the last
    seq the caller saw; a repeated `idempotency_key` returns the event it first appended.
    """
    fields = {name: value for name, value in fields.items() if value is not None}
    _check_inputs(session_id, event_type, fields, expected_seq, idempotency_key)
    if not user.is_authenticated:
        raise Forbidden("Sign in to append events.")
    args = (session_id, event_type, fields, user, expected_seq, idempotency_key, now)
    for _ in range(_ATTEMPTS - 1):
        try:
            return _append_in_transaction(*args)
        except IntegrityError:
            continue  # another writer took this seq first: read the new tail, try again
    return _append_in_transaction(*args)


def _append_in_transaction(session_id, *args):
    with _writing(session_id):
        return _append_to_stream(session_id, *args)


def _append_to_stream(session_id, event_type, fields, user, expected_seq, idempotency_key, now):
    with connection.cursor() as cursor:
        if idempotency_key is not None:
            cursor.execute(_KEY_SQL, [session_id, idempotency_key])
            earlier = cursor.fetchone()
            if earlier is not None:
                return Appended(Event.objects.get(pk=earlier[0]), created=False)
        ends = _stream_ends(cursor, session_id)
        status = projections.status(ends)
        seq = ends[-1].seq if ends else 0
        if not ends and event_type != vocabulary.START:
            raise UnknownSession(session_id)
        if ends and event_type == vocabulary.START:
            raise Conflict(
                "session_exists",
                f"A session with the id {session_id!r} already exists.",
                session_id,
                status,
                seq,
            )
        owner = projections.owner(ends)
        if ends and not may_act(user, owner):
            raise Forbidden(
                f"Only the session's owner ({owner}) or someone allowed "
                "to act on any session may change it."
            )
        if expected_seq is not None and expected_seq != seq:
            raise Conflict(
                "stale_expected_seq",
                f"The session moved on: you expected seq {expected_seq}, but it is at seq {seq}.",
                session_id,
                status,
                seq,
            )
        problem = vocabulary.transition_error(event_type, status)
        if problem:
            raise Conflict(
                "transition_not_allowed", f"Refused: {problem}.", session_id, status, seq
            )
        now = now or timezone.now()
        timestamp = max(now, ends[-1].timestamp) if ends else now
        event = _insert(
            cursor,
            [
                session_id,
                seq + 1,
                event_type,
                timestamp,
                user.get_username(),
                fields.get("title"),
                fields.get("reason"),
                fields.get("note"),
                idempotency_key,
            ],
        )
    return Appended(event, created=True)


class StreamMismatch(AppendError):
    code = "exists_differently"
    status_code = 409


def import_stream(session_id, records):
    """Store a whole validated stream (from JSONL) in one transaction.

    Returns True when written, False when the session already holds exactly these
    events; raises `StreamMismatch` when it holds different ones.
    """
    records = list(records)
    with _writing(session_id):
        existing = Event.objects.stream(session_id)
        if existing:
            if existing == records:
                return False
            raise StreamMismatch(
                f"Session {session_id!r} already exists with different events "
                f"({len(existing)} stored, {len(records)} in the file)."
            )
        Event.objects.bulk_create(Event(**record._asdict()) for record in records)
    return True
