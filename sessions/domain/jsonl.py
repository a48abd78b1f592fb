"""The JSONL codec (docs/rules.md, "JSONL"): one `<id>.jsonl` file per session or plan. Pure Python.

`encode_log` writes the canonical form (export); `decode_log` reads it back with the
leniencies the rules allow (import), refusing anything else with the file's line number.
"""

import json
from collections.abc import Callable, Collection, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from sessions.domain import plans, reclaims, vocabulary
from sessions.domain.records import EventRecord

SUFFIX = ".jsonl"
COMMON_KEYS = ("session", "seq", "type", "timestamp", "actor")
PLAN_KEYS = ("plan", "seq", "type", "timestamp", "actor")  # a plan file's lines


def id_key(event_type: str) -> str:
    """The key naming a line's stream: `plan` for plan events, `session` otherwise."""
    return "plan" if event_type in vocabulary.PLAN_EVENT_TYPES else "session"


class LogError(ValueError):
    """A log that cannot be imported; `line` is the 1-based line number in the file."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


def format_timestamp(moment: datetime) -> str:
    """`YYYY-MM-DDTHH:MM:SS.ffffffZ`; the year always has four digits (strftime's `%Y`
    writes year 999 as `999`, which no ISO 8601 reader takes back)."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_timestamp(text: object) -> datetime:
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


def event_dict(event: EventRecord) -> dict[str, Any]:
    """An event as an ordered dict in the JSONL key order (also the API's event shape)."""
    data = {
        id_key(event.type): event.session,
        "seq": event.seq,
        "type": event.type,
        "timestamp": format_timestamp(event.timestamp),
        "actor": event.actor,
    }
    if event.agent is not None:
        data[vocabulary.AGENT] = event.agent  # who acted for the actor, beside them
    for name in vocabulary.FIELDS[event.type]:
        value = getattr(event, name)
        if value is not None:
            data[name] = value
    if data.get("budget_usd") == 0:
        data["budget_usd"] = None  # an amend's removal of the plan's budget
    return data


def encode_event(event: EventRecord) -> str:
    return json.dumps(event_dict(event), ensure_ascii=False, separators=(",", ":")) + "\n"


def encode_log(events: Iterable[EventRecord]) -> str:
    return "".join(encode_event(event) for event in events)


def session_id_from_file_name(file_name: str) -> str:
    """The session id a file name stands for, e.g. `abc.jsonl` → `abc`."""
    stem = file_name[: -len(SUFFIX)] if file_name.endswith(SUFFIX) else file_name
    problem = vocabulary.session_id_error(stem)
    if problem:
        raise LogError(0, f"the file name gives the session id {stem!r}, which {problem}")
    return stem


class RepeatedKey(ValueError):
    """A JSON object that gives one key twice."""


def object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once (`json.loads`' `object_pairs_hook`,
    for a JSONL line and an API body alike): a repeated key would silently drop one of
    its values."""
    found = dict(pairs)
    if len(found) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:  # the first key met again
            if key in seen:
                raise RepeatedKey(f"the key {key!r} is given twice")
            seen.add(key)
    return found


# One decoder for every strict read: `json.loads` with a hook makes a new one each call.
_STRICT = json.JSONDecoder(object_pairs_hook=object_without_repeats)


def strict_loads(text: str) -> Any:
    """JSON text as a value, refusing an object that gives one key twice (`RepeatedKey`),
    as `json.loads(text, object_pairs_hook=object_without_repeats)` does."""
    if text.startswith("\ufeff"):
        return json.loads(text)  # refused as json.loads words it: a byte-order mark
    return _STRICT.decode(text)


def _decode_line(
    raw: bytes, stream_id: str, latest: datetime | None = None
) -> tuple[int | None, EventRecord]:
    """One line's fields, checked on their own (ordering and transitions come later);
    a moment after `latest`, if given, is refused."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not valid UTF-8") from None
    if not text.strip():
        raise ValueError("empty line")
    try:
        data = strict_loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise ValueError("not valid JSON (nested too deeply)") from None
    if not isinstance(data, dict):
        raise ValueError("each line must be a JSON object")
    event_type = data.get("type")
    if event_type not in vocabulary.FIELDS:
        raise ValueError(f"unknown type {event_type!r}")
    own = vocabulary.own_fields(event_type)
    key = id_key(event_type)
    common = PLAN_KEYS if key == "plan" else COMMON_KEYS
    unknown = [name for name in data if name not in common and name not in own]
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r} for {event_type}")
    if data.get(key, stream_id) != stream_id:
        raise ValueError(f"{key} {data[key]!r} differs from the file name's {stream_id!r}")
    seq = data.get("seq")
    if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 1):
        raise ValueError("seq must be a whole number of at least 1")
    if "timestamp" not in data:
        raise ValueError("timestamp is missing")
    timestamp = parse_timestamp(data["timestamp"])
    if latest is not None and timestamp > latest:
        # Appends never go back in time, so one moment in the future would pin every
        # later event of its stream there.
        raise ValueError(
            f"timestamp {format_timestamp(timestamp)} is later than one day past this"
            f" machine's clock ({format_timestamp(latest)})"
        )
    problem = vocabulary.actor_error(data.get("actor"))
    if problem:
        raise ValueError(f"actor {problem}")
    fields = {name: data.get(name) for name in own if data.get(name) is not None}
    fields.update(vocabulary.removals(event_type, data))
    errors = vocabulary.field_errors(event_type, fields)
    if errors:
        name, problem = next(iter(errors.items()))
        raise ValueError(f"{name} {problem}")
    return seq, EventRecord(
        stream_id, 0, event_type, timestamp, data["actor"], **vocabulary.canonical_fields(fields)
    )


def is_plan_file(data: bytes) -> bool:
    """Whether a file's bytes look like a plan's (its first line is a plan event), so
    that an import can take plans before the sessions that name them."""
    first = data.split(b"\n", 1)[0]
    try:
        line = json.loads(first)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(line, dict) and line.get("type") in vocabulary.PLAN_EVENT_TYPES


def decode_log(
    file_name: str,
    data: bytes,
    plan_nodes: Callable[[str], Collection[str] | None] | None = None,
    latest: datetime | None = None,
) -> tuple[str, list[EventRecord]]:
    """The events of one file's bytes, in stream order with `seq` assigned.

    `latest`, if given, is the latest moment an event may carry (an import gives its own
    clock plus `vocabulary.IMPORT_FUTURE_LIMIT`).

    A file of plan events is a plan's, checked against the graph rules; a session that
    starts on a plan's node is checked against `plan_nodes(plan_id)`, the keys of a
    stored plan's nodes (None when there is no such plan). Raises `LogError` naming the
    first offending line (as numbered in the file).
    """
    stream_id = session_id_from_file_name(file_name)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    decoded: list = []
    for number, raw in enumerate(lines, start=1):
        try:
            given_seq, record = _decode_line(raw, stream_id, latest)
        except ValueError as exc:
            raise LogError(number, str(exc)) from None
        if decoded and id_key(record.type) != id_key(decoded[0][3].type):
            raise LogError(number, "a file holds one session's events or one plan's, not both")
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
    graph = plans.Graph()
    for seq, (_, number, given_seq, record) in enumerate(decoded, start=1):
        if given_seq is not None and given_seq != seq:
            raise LogError(number, f"seq {given_seq} should be {seq} after ordering by timestamp")
        record = record._replace(seq=seq)
        try:
            if record.type in vocabulary.PLAN_EVENT_TYPES:
                graph = plans.apply(graph, record)
            else:
                problem = vocabulary.transition_error(record.type, status)
                if problem:
                    raise ValueError(f"illegal transition: {problem}")
                status = vocabulary.STATUS_AFTER.get(record.type, status)  # progress keeps it
                if record.plan is not None and plan_nodes is not None:
                    _check_node(record, plan_nodes(record.plan))
        except ValueError as exc:
            raise LogError(number, str(exc)) from None
        records.append(record)
    if len(records) == vocabulary.MAX_STREAM_EVENTS and status not in (None, vocabulary.CLOSED):
        # Its last place is the close's: a session that fills it otherwise could never
        # be closed (nor reclaimed, nor released).
        raise LogError(
            decoded[-1][1],
            f"the session fills its stream ({vocabulary.MAX_STREAM_EVENTS} events) without a "
            "session_close: its last place is kept for the close, so it could never be closed",
        )
    return stream_id, records


def _check_node(start: EventRecord, nodes: Collection[str] | None) -> None:
    if nodes is None:
        raise ValueError(f"plan {start.plan!r} does not exist (import plans before sessions)")
    if start.node not in nodes:
        raise ValueError(f"node {start.node!r} is not a node of plan {start.plan!r}")


def shifted(records: Iterable[EventRecord], delta: timedelta) -> list[EventRecord]:
    """The records moved in time by `delta` (a timedelta), as if they had happened that
    much later: a demo made relative to now. A reclaim's note says since when its
    session was silent; that moment moves with the rest."""
    moved = []
    for record in records:
        record = record._replace(timestamp=record.timestamp + delta)
        reclaim = reclaims.reclaimed(record)
        if reclaim is not None:
            since = parse_timestamp(reclaim[0]) + delta
            note = reclaims.reclaim_note(since, reclaim[1], format_timestamp)
            record = record._replace(note=note)
        moved.append(record)
    return moved
