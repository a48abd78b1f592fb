"""Each plan's graph, kept per process and caught up from the row it was folded to.

A claim, a start on a node, an amend and every plan view need the plan's graph: its
events folded by `plans.graph_of`. A plan's events never change and its stream only
grows, so a graph once folded stays the graph of that stream up to its last row. Each
process keeps the graph with the last row it was folded up to; one index probe
(`store.stream_tail`) tells whether it still holds, and when the plan has grown only the
events after that row are read and folded in (`plans.graph_after`). So no request about
a plan reads its history again: an amend storm of hundreds of large amends costs each
request the same as the first (bench/plan_amends.py). Nothing is written anywhere.

A graph is kept with the whole last row, not only its seq, and a catch-up first checks
that the row at the kept seq is still that row: a graph read inside a transaction that
inserted a row and then rolled back is never used again, even once another event takes
the same seq. The least recently used plans are dropped beyond the bound of `GRAPHS`.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from sessions import store
from sessions.domain import plans, vocabulary
from sessions.domain.records import EventRecord
from sessions.readmodels.kept import Kept, always
from sessions.store.database import SEQ_INDEX


@dataclass(frozen=True)
class _Folded:
    tail: tuple  # the last row folded, as stored
    seq: int
    graph: plans.Graph


# Keyed by the whole row the graph was folded to, so kept always.
GRAPHS = Kept(bound=1_000, keep_when=always)


def graph(plan_id: str) -> plans.Graph | None:
    """The plan's graph (`plans.graph_of` of its events), or None for no such plan."""
    tail = store.stream_tail(plan_id)
    if tail is None:
        return None
    kept = GRAPHS.get(plan_id)
    if kept is not None and kept.tail == tail:
        return kept.graph
    if kept is not None:
        row, later = store.read_stream_from(plan_id, kept.seq)
        if row == kept.tail:
            return _keep(plan_id, tail, plans.graph_after(kept.graph, later), later)
    events = store.read_stream(plan_id)
    if not events or events[0].type != vocabulary.PLAN_CREATE:
        return None
    return _keep(plan_id, tail, plans.graph_of(events), events)


def _keep(plan_id: str, tail: tuple, found: plans.Graph, read: list[EventRecord]) -> plans.Graph:
    """Keep `found` if the events `read` reach `tail` (else the plan grew in between:
    fold again next time)."""
    if read and read[-1].seq == tail[SEQ_INDEX]:
        GRAPHS.put(plan_id, _Folded(tail, tail[SEQ_INDEX], found))
    return found


def lease(plan_id: str | None, at: datetime | None = None) -> timedelta | None:
    """The lease in force on the plan now (or at `at`), or None: no such plan, or one
    that never named a lease (nothing of it lapses)."""
    if plan_id is None:
        return None
    if at is None:
        found = graph(plan_id)
        minutes = found.lease if found is not None else None
    else:
        minutes = store.plan_setting_as_of(plan_id, "lease", at)
    return timedelta(minutes=minutes) if minutes is not None else None
