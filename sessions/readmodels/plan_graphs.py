"""Each plan's graph, kept per process and used again while the plan has not grown.

A claim, a start on a node and an amend each need the plan's graph: its events folded
by `plans.graph_of`, which checks every event again (a 480-node plan: about 2 ms, most
of a claim's time under the plan's lock). A plan's events never change and its stream
only grows, so a graph once folded stays the graph of that stream for as long as its
last row is the same. Each process keeps the graph with the last row it was folded up
to, and one index probe (`store.stream_tail`) tells whether it still holds. Nothing is
written anywhere.

A graph is kept with the whole last row, not only its seq: a graph read inside a
transaction that inserted that row and then rolled back is never used again, even once
another event takes the same seq (no code here reads a plan's graph after writing one of
its events in the same transaction, but nothing depends on that). The least recently
used plans are dropped beyond the bound of `GRAPHS`.
"""

from sessions import store
from sessions.domain import plans, vocabulary
from sessions.domain.records import EventRecord
from sessions.readmodels.kept import Kept, always

_SEQ = EventRecord._fields.index("seq")

# (the last row folded, its graph) per plan, keyed by that whole row: kept always.
GRAPHS = Kept(bound=1_000, keep_when=always)


def graph(plan_id: str) -> plans.Graph | None:
    """The plan's graph (`plans.graph_of` of its events), or None for no such plan."""
    tail = store.stream_tail(plan_id)
    if tail is None:
        return None
    kept = GRAPHS.get(plan_id)
    if kept is not None and kept[0] == tail:
        return kept[1]
    events = store.read_stream(plan_id)
    if not events or events[0].type != vocabulary.PLAN_CREATE:
        return None
    found = plans.graph_of(events)
    if events[-1].seq == tail[_SEQ]:  # else it grew in between: fold again next time
        GRAPHS.put(plan_id, (tail, found))
    return found
