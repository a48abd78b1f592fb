"""The event store: the only SQL, locks and per-database differences in Control Tower.

Above it the rules (`rules.append`) decide what may be written and the read models
(`readmodels`) decide what to show; below it are the tables. Each module holds one
concern, and this package's namespace is the seam the layers above call through:

- `writing`: where an append runs (`appending`, `holding` its streams against every
  other writer), a stream's ends, idempotency keys, and the inserts;
- `streams`: whole streams (`read_stream`, `read_streams`), the few events a view
  depends on (`read_view_events`), time spans, lengths and blocked runs;
- `feed`: how far the table can be read in position order with no lower position still
  to appear (`SafePosition`), and the events up to there (`read_feed`);
- `plan_rows`: a plan's node sessions and the plans' ids;
- `flow`: the flow metrics' folds;
- `board`: the board's and the list's candidate sessions, statuses and filters;
- `spend`, `space`, `work`: what sessions spent, the paths they hold and wrote, where
  their work lands (called by name);
- `tokens`, `visits`, `subscriptions`, `deliveries`, `users`: the operational tables
  beside the events (their modules are called by name, not through this namespace);
- `connections`: transactions, connection state and a request run again after a lost
  connection; `database`: what every statement shares, and the per-database pieces.

Rows come out as `EventRecord`s (`domain.records`), never as model instances. The store
raises its own errors (`connections.DatabaseUnavailable`, `writing.RaceLost`), never
Django's.
"""

from sessions.store.board import (
    SessionQuery,
    board_rows,
    board_rows_as_of,
    listing,
    newest_position,
)
from sessions.store.feed import SafePosition, read_feed, streams_of_types
from sessions.store.flow import closed_before, closes_by_agent, first_moment, flow_folds
from sessions.store.plan_rows import (
    first_progress_notes,
    handoffs_of,
    liveness_of,
    node_sessions,
    node_sessions_after,
    node_sessions_of,
    plan_ids,
    plan_setting_as_of,
)
from sessions.store.streams import (
    blocked_run_changes_after,
    blocked_run_starts,
    event_position,
    events_page,
    every_stream,
    has_acted,
    read_stream,
    read_stream_from,
    read_streams,
    read_view_events,
    session_exists,
    stream_lengths,
    stream_spans,
    streams_as_of,
)
from sessions.store.writing import (
    RaceLost,
    appending,
    claim_event,
    hold_also,
    holding,
    insert,
    insert_many,
    key_event,
    last_event,
    start_by_key,
    stream_ends,
    stream_tail,
)

__all__ = [
    "RaceLost",
    "SafePosition",
    "SessionQuery",
    "appending",
    "blocked_run_changes_after",
    "blocked_run_starts",
    "board_rows",
    "board_rows_as_of",
    "claim_event",
    "closed_before",
    "closes_by_agent",
    "event_position",
    "events_page",
    "every_stream",
    "first_moment",
    "first_progress_notes",
    "flow_folds",
    "handoffs_of",
    "has_acted",
    "hold_also",
    "holding",
    "insert",
    "insert_many",
    "key_event",
    "last_event",
    "listing",
    "liveness_of",
    "newest_position",
    "node_sessions",
    "node_sessions_after",
    "node_sessions_of",
    "plan_ids",
    "plan_setting_as_of",
    "read_feed",
    "read_stream",
    "read_stream_from",
    "read_streams",
    "read_view_events",
    "session_exists",
    "start_by_key",
    "stream_ends",
    "stream_lengths",
    "stream_spans",
    "stream_tail",
    "streams_as_of",
    "streams_of_types",
]
