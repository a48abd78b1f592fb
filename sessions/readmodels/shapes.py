"""The JSON of what the read side gives, shared by every surface that sends it: an
event (the JSONL shape), a feed item, the flow metrics, moments as JSONL writes them.
The API's schemas (`api.requests`, `api.answers`) describe the same shapes for OpenAPI."""

from datetime import datetime

from sessions.domain import jsonl
from sessions.domain.records import EventRecord


def plain(value: object) -> object:
    return jsonl.format_timestamp(value) if isinstance(value, datetime) else value


def event_json(event: EventRecord) -> dict:
    """An event as the API and JSONL give it (`jsonl.event_dict` is the one shape)."""
    return jsonl.event_dict(event)


def feed_item(position: int, event: EventRecord) -> dict:
    return {"position": position, **event_json(event)}


def metrics_json(found: dict) -> dict:
    """`metrics.metrics` as the `Metrics` schema gives it."""
    return {
        **found,
        "since": plain(found["since"]),
        "until": plain(found["until"]),
        "throughput": {
            day: {outcome: n for outcome, n in counts.items() if n}
            for day, counts in found["throughput"].items()
        },
        "spend": {
            name: {key: float(usd) for key, usd in amounts.items()}
            for name, amounts in found["spend"].items()
        },
    }
