"""The events each stream's view depends on (`projections.ViewEvents`), kept per process
as its own appends left them.

An append reads them under its stream's lock to check the transition, and knows them
after its event without reading again (`projections.view_events_after`). A stream only
grows at its end and its events never change, so what was true after this process's
append is true while the stream's last event is still that append's: one probe of the
last event (`store.last_event`) tells, where reading them is fourteen. Another process's
append, or any append this process did not keep, moves the last event, and the events
are read again. Nothing that depends on the clock is kept: only events.

Kept only when committed (outside any transaction: a rolled-back append must not be
kept); the least recently used streams are dropped beyond the bound.
"""

from sessions import store
from sessions.domain.projections import ViewEvents
from sessions.domain.vocabulary import MAX_BLOCKERS_SHOWN
from sessions.readmodels.kept import Kept

# Each value: (the events as a tuple, shared between threads; open blocks; pending).
KEPT = Kept(bound=20_000)


def view_events(stream: str) -> ViewEvents:
    """The events `stream`'s view depends on now: as kept, while its last event is the
    one they end with; else read (`store.read_view_events`)."""
    kept = KEPT.get(stream)
    if kept is not None:
        events, open_blocks, pending = kept
        if store.last_event(stream) == events[-1]:
            return ViewEvents(list(events), open_blocks, pending)
    return store.read_view_events(stream, MAX_BLOCKERS_SHOWN)


def committed(stream: str, found: ViewEvents) -> None:
    """Keep what an append this process committed left `stream`'s view depending on."""
    if found.events:
        KEPT.put(stream, (tuple(found.events), found.open_blocks, found.pending_messages))
