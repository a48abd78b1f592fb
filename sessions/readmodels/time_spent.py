"""How long each stream has spent after each type of event: a read model each process
keeps in memory, caught up by seq.

A session's time in each status is the sum of the spans between its transitions, which
needs every one once. Summed afresh for each view, that made a view of a 100,000-event
session cost 280 ms instead of 1 (bench/RESULTS.md §7). But events are never changed
and a stream grows only at its end, so a sum once made stays true: each process keeps,
per stream, the sums up to its last transition then, and adds only the spans of the
transitions after it. The first view of a long stream in a process pays for the whole
stream once; a view of a stream that has not grown since pays nothing; an append made by
this process adds its own span without asking (`kept.appended`). Nothing is written anywhere.

Sums are kept only when read outside a transaction, where a reader sees committed rows
only (a rolled-back append must not be counted). The least recently read streams are
dropped beyond the bound of `SUMS`, and summed again if read again.
"""

from dataclasses import dataclass
from datetime import timedelta

from sessions import store
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import STATUS_AFTER
from sessions.readmodels.kept import Kept


@dataclass(frozen=True)
class _Sums:
    spans: dict[str, int]  # microseconds from each transition to the next, by event type
    last: EventRecord  # the transition they are summed up to (its own span not yet)


class _SumsKept(Kept):
    def appended(self, previous: EventRecord, event: EventRecord) -> None:
        """Add the span between `previous` and `event`, both transitions, to the sums
        kept up to `previous`, if any, instead of asking later. (Progress and messages
        leave the status as it was: the sums, kept up to the last transition, hold.)"""
        kept = self.get(event.session)
        if kept is None or kept.last.seq != previous.seq or event.seq != previous.seq + 1:
            return
        if event.type not in STATUS_AFTER:
            return
        span = (event.timestamp - previous.timestamp) // timedelta(microseconds=1)
        total = dict(kept.spans)
        total[previous.type] = total.get(previous.type, 0) + span
        self.put(event.session, _Sums(total, event))


SUMS = _SumsKept(bound=20_000)


def spans(stream: str, last: EventRecord) -> dict[str, int]:
    """`store.stream_spans` of the stream up to its transition `last` (the last one the
    caller read), from the sums kept and what came since."""
    kept = SUMS.get(stream)
    if kept is not None and kept.last.seq == last.seq:
        return dict(kept.spans)  # a copy: what is kept is shared by every thread
    base = kept if kept is not None and kept.last.seq < last.seq else None
    added, reached = store.stream_spans(stream, base.last.seq if base else 1, last.seq)
    total = dict(base.spans) if base else {}
    for kind, microseconds in added.items():
        total[kind] = total.get(kind, 0) + microseconds
    if reached == last.seq:
        SUMS.put(stream, _Sums(total, last))
    return total
