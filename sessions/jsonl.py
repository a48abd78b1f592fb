"""The JSONL codec of DESIGN.md: one `<session-id>.jsonl` file per session. Pure Python.

`encode_log` writes the canonical form (export); `decode_log` reads it back with the
leniencies DESIGN.md allows (import), refusing anything else with the file's line number.
"""

import json
from datetime import UTC, datetime

from . import vocabulary
from .projections import EventRecord

SUFFIX = ".jsonl"
COMMON_KEYS = ("session", "seq", "type", "timestamp", "actor")


class LogError(ValueError):
    """A log that cannot be imported; `line` is the 1-based line number in the file."""

    def __init__(self, line, reason):
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


def format_timestamp(moment):
    """`YYYY-MM-DDTHH:MM:SS.ffffffZ`; the year always has four digits (strftime's `%Y`
    writes year 999 as `999`, which no ISO 8601 reader takes back)."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_timestamp(text):
    """An aware UTC datetime from ISO 8601 text with `Z` or any UTC offset."""
    if not isinstance(text, str):
        raise ValueError("timestamp must be text")
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"timestamp {text!r} is not an ISO 8601 date and time") from None
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {text!r} has no UTC offset (add Z or +00:00)")
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"timestamp {text!r} is outside the years 1 to 9999 in UTC") from None


def event_dict(event):
    """An event as an ordered dict in the JSONL key order (also the API's event shape)."""
    data = {
        "session": event.session,
        "seq": event.seq,
        "type": event.type,
        "timestamp": format_timestamp(event.timestamp),
        "actor": event.actor,
    }
    for name in vocabulary.FIELDS[event.type]:
        value = getattr(event, name)
        if value is not None:
            data[name] = value
    return data


def encode_event(event):
    return json.dumps(event_dict(event), ensure_ascii=False, separators=(",", ":")) + "\n"


def encode_log(events):
    return "".join(encode_event(event) for event in events)


def session_id_from_file_name(file_name):
    """The session id a file name stands for, e.g. `abc.jsonl` → `abc`."""
    stem = file_name[: -len(SUFFIX)] if file_name.endswith(SUFFIX) else file_name
    problem = vocabulary.session_id_error(stem)
    if problem:
        raise LogError(0, f"the file name gives the session id {stem!r}, which {problem}")
    return stem


def _decode_line(raw, session_id):
    """One line's fields, checked on their own (ordering and transitions come later)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not valid UTF-8") from None
    if not text.strip():
        raise ValueError("empty line")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("each line must be a JSON object")
    event_type = data.get("type")
    if event_type not in vocabulary.FIELDS:
        raise ValueError(f"unknown type {event_type!r}")
    own = vocabulary.FIELDS[event_type]
    unknown = [key for key in data if key not in COMMON_KEYS and key not in own]
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r} for {event_type}")
    if data.get("session", session_id) != session_id:
        raise ValueError(f"session {data['session']!r} differs from the file name's {session_id!r}")
    seq = data.get("seq")
    if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 1):
        raise ValueError("seq must be a whole number of at least 1")
    if "timestamp" not in data:
        raise ValueError("timestamp is missing")
    timestamp = parse_timestamp(data["timestamp"])
    problem = vocabulary.actor_error(data.get("actor"))
    if problem:
        raise ValueError(f"actor {problem}")
    fields = {name: data.get(name) for name in own if data.get(name) is not None}
    errors = vocabulary.field_errors(event_type, fields)
    if errors:
        name, problem = next(iter(errors.items()))
        raise ValueError(f"{name} {problem}")
    return seq, EventRecord(
        session=session_id,
        seq=0,
        type=event_type,
        timestamp=timestamp,
        actor=data["actor"],
        title=fields.get("title"),
        reason=fields.get("reason"),
        note=fields.get("note"),
    )


def decode_log(file_name, data):
    """The events of one file's bytes, in stream order with `seq` assigned.

    Raises `LogError` naming the first offending line (as numbered in the file).
    """
    session_id = session_id_from_file_name(file_name)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    decoded = []
    for number, raw in enumerate(lines, start=1):
        try:
            given_seq, record = _decode_line(raw, session_id)
        except ValueError as exc:
            raise LogError(number, str(exc)) from None
        decoded.append((record.timestamp, number, given_seq, record))
    if not decoded:
        raise LogError(1, "the file holds no events")
    if len(decoded) > vocabulary.MAX_STREAM_EVENTS:
        raise LogError(
            vocabulary.MAX_STREAM_EVENTS + 1,
            f"a stream may hold at most {vocabulary.MAX_STREAM_EVENTS} events",
        )
    # Stream order: by timestamp, file order breaking ties (the sort is stable).
    decoded.sort(key=lambda item: item[0])
    records = []
    status = None
    for seq, (_, number, given_seq, record) in enumerate(decoded, start=1):
        if given_seq is not None and given_seq != seq:
            raise LogError(number, f"seq {given_seq} should be {seq} after ordering by timestamp")
        problem = vocabulary.transition_error(record.type, status)
        if problem:
            raise LogError(number, f"illegal transition: {problem}")
        status = vocabulary.STATUS_AFTER[record.type]
        records.append(record._replace(seq=seq))
    return session_id, records
