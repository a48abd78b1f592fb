"""Import: a whole validated stream (from JSONL) stored in one transaction, or refused."""

from sessions import store
from sessions.domain import jsonl, vocabulary
from sessions.domain.records import EventRecord
from sessions.rules.refusals import StreamMismatch


def import_stream(session_id: str, records: list[EventRecord], moved: bool = False) -> bool:
    """Store a whole validated stream (from JSONL) in one transaction.

    Returns True when written, False when the session already holds exactly these
    events; raises `StreamMismatch` when it holds different ones. With `moved` (the
    records were moved in time, as the demo is moved to now), a session holding these
    events moved by another span is the same log loaded before: it is left as it is
    (False), so that loading the demo again says so instead of refusing it.
    """
    records = list(records)
    # A start on a plan's node holds the plan, as every such start does (`plan_sessions`).
    plan = records[0].plan if records and records[0].type == vocabulary.START else None
    with store.holding(*((plan, session_id) if plan else (session_id,))):
        existing = store.read_stream(session_id)
        if existing:
            if existing == records or (moved and _same_log_moved(existing, records)):
                return False
            raise StreamMismatch(
                f"Session {session_id!r} already exists with different events "
                f"({len(existing)} stored, {len(records)} in the file)."
            )
        store.insert_many(records)
    return True


def _same_log_moved(existing: list[EventRecord], records: list[EventRecord]) -> bool:
    """Whether `existing` is `records` moved in time by one span."""
    if len(existing) != len(records) or not records:
        return False
    return existing == jsonl.shifted(records, existing[0].timestamp - records[0].timestamp)
