"""How long each stream has spent after each type of event: a read model each process
keeps in memory, caught up by seq.

A session's time in each status is the sum of the spans between its events, which
needs every event once. Summed afresh for each view, that made a view of a 100,000-event
session cost 280 ms instead of 1 (bench/RESULTS.md §7). But events are never changed
and a stream grows only at its end, so a sum once made stays true: each process keeps,
per stream, the sums up to some seq and adds only the spans of the events after it.
The first view of a long stream in a process pays for the whole stream once; later ones
pay for what was appended since. Nothing is written anywhere.

Sums are kept only when read outside a transaction, where a reader sees committed rows
only (a rolled-back append must not be counted). The least recently read streams are
dropped beyond `KEPT_STREAMS`, and summed again if read again.
"""

import threading
from collections import OrderedDict
from dataclasses import dataclass

from django.db import connection

from . import store

KEPT_STREAMS = 20_000


@dataclass(frozen=True)
class _Sums:
    spans: dict[str, int]  # microseconds to the next event, by event type
    reached: int  # the seq up to which the spans are summed


_kept: OrderedDict[tuple[str, str], _Sums] = OrderedDict()
_lock = threading.Lock()


def spans(stream: str) -> dict[str, int]:
    """`store.stream_spans` of the whole stream, from the sums kept and what came since."""
    key = (connection.alias, stream)
    with _lock:
        kept = _kept.get(key) or _Sums({}, 1)
    added, reached = store.stream_spans(stream, kept.reached)
    total = dict(kept.spans)
    for kind, microseconds in added.items():
        total[kind] = total.get(kind, 0) + microseconds
    if not connection.in_atomic_block and reached > kept.reached:
        with _lock:
            _kept[key] = _Sums(total, reached)
            _kept.move_to_end(key)
            while len(_kept) > KEPT_STREAMS:
                _kept.popitem(last=False)
    return total


def forget() -> None:
    """Drop every kept sum, e.g. after the database was emptied or restored."""
    with _lock:
        _kept.clear()
