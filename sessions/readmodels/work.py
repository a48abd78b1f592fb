"""Where a session's work lands, read for its view when the view has only the events
its status and blockers depend on (`store.work`: a few probes, however long the stream)."""

from collections.abc import Sequence

from sessions.domain import vocabulary, work
from sessions.domain.records import EventRecord
from sessions.store import work as work_rows


def work_of(session_id: str, view_events: Sequence[EventRecord]) -> work.Work | None:
    """The session's `work`, from its view's events (which hold its latest work report,
    if any: none, and there is nothing to read)."""
    if not any(event.type == vocabulary.WORK for event in view_events):
        return None
    return work.work(work_rows.work_events(session_id))
