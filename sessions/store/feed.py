"""Reading by position: how far the table can be read with no lower position still to
appear (`SafePosition`), the feed up to there, and the streams of some types' rows in a
position range."""

from collections.abc import Sequence
from typing import Any

from django.db import connection

from sessions.domain import vocabulary
from sessions.domain.records import EventRecord
from sessions.store.database import RECORD_COLUMNS, TABLE, reading_cursor, records_from_rows

# Reading by position ------------------------------------------------------------------

# PostgreSQL: the newest id, and the transactions of this database that hold an id
# (a writer takes its transaction id before any event id). Transactions of other
# databases on the same server cannot write this table, so they are not waited for: a
# backup, a report or an idle session elsewhere never holds the feed back. Each backend's
# transaction id is shown to every role, the app's least-privilege one included.
_SEEN_POSTGRESQL = (
    f"SELECT (SELECT MAX(id) FROM {TABLE}), ARRAY(SELECT backend_xid::text"
    " FROM pg_stat_activity WHERE datname = current_database()"
    " AND backend_xid IS NOT NULL AND pid <> pg_backend_pid())"
)


class SafePosition:
    """Tracks the safe position: one at or below which no event can still appear.

    - SQLite has one writer at a time (transactions begin IMMEDIATE), so rows become
      visible in id order: the newest id seen is safe.
    - PostgreSQL hands out ids as rows are inserted, and transactions commit in any
      order: a lower id can become visible after a higher one was seen. Every writer
      takes its transaction id before its event ids (`holding`), so an uncommitted row
      with an id up to the newest one seen belongs to a transaction that held an id
      when it was seen. Each sighting keeps the newest id and those transactions (of
      this database only); once none of them is running any more, no row up to that id
      can appear. A transaction left open in this database that has written anything
      holds the safe position back (`idle_in_transaction_session_timeout` bounds it on
      the app's connections); one in another database on the same server does not.

    Call `advance` outside transactions only, where a reader sees committed rows only.
    """

    def __init__(self) -> None:
        self.position = 0
        # PostgreSQL: (newest id seen, the transactions then running), oldest first.
        self.sightings: list[tuple[int, frozenset[str]]] = []

    def advance(self) -> int:
        """The safe position now (never lower than before, unless rows were lost)."""
        with connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                cursor.execute(f"SELECT MAX(id) FROM {TABLE}")
                return cursor.fetchone()[0] or 0
            cursor.execute(_SEEN_POSTGRESQL)
            newest, running = cursor.fetchone()
        newest, running = newest or 0, frozenset(running)
        if not self.sightings or self.sightings[-1][0] != newest:
            self.sightings.append((newest, running))
            # While a long transaction runs, keep the latest sightings only: any one of
            # them is a valid safe position once settled.
            del self.sightings[:-100]
        settled = [seen for seen, then in self.sightings if not then & running]
        self.sightings = [(seen, then) for seen, then in self.sightings if then & running]
        return max(settled, default=self.position)


# The feed's narrowing, each an optional clause on the rows read after a position.
_FEED_FILTERS = {
    "event_type": "type = %s",
    "stream": "session = %s",
    # A plan's own events, and those of every session started on one of its nodes.
    "plan": (
        f"(session = %s OR session IN (SELECT session FROM {TABLE}"
        f" WHERE type = '{vocabulary.START}' AND plan = %s))"
    ),
}


def read_feed(
    after: int, up_to: int, limit: int, **filters: str | None
) -> list[tuple[int, EventRecord]]:
    """Up to `limit` events with a position in (after, up_to], in position order, each
    with its position, narrowed by any of `_FEED_FILTERS` given (None: not narrowed).
    With `up_to` a `SafePosition`, a reader that keeps the last position it saw never
    misses an event nor sees one twice."""
    clauses = ["id > %s", "id <= %s"]
    params: list[Any] = [after, up_to]
    for name, value in filters.items():
        if value is not None:
            clauses.append(_FEED_FILTERS[name])
            params += [value] * _FEED_FILTERS[name].count("%s")
    sql = f"SELECT id, {RECORD_COLUMNS} FROM {TABLE} WHERE {' AND '.join(clauses)}"
    with reading_cursor() as cursor:
        cursor.execute(f"{sql} ORDER BY id LIMIT %s", [*params, limit])
        rows = cursor.fetchall()
    records = records_from_rows([row[1:] for row in rows])
    return [(row[0], record) for row, record in zip(rows, records, strict=True)]


# The sessions of some types' rows in a position range. The first fold's unary plus
# keeps the planner off the primary key, so that it reads the type's partial index
# instead of the whole table (328 -> 158 ms in SQLite at 100,000 closed sessions,
# bench/RESULTS.md §3). Both databases read a one-type `IN` as an equality.
_STREAMS_OF_TYPES = f"SELECT session FROM {TABLE} WHERE type IN ({{types}}) AND "
_POSITIONS_BETWEEN = "id > %s AND id <= %s"
_POSITIONS_UP_TO = "+id <= %s"
_POSITIONS_AFTER = "id > %s"


def streams_of_types(event_types: Sequence[str], after: int, up_to: int | None) -> set[str]:
    """The streams with a row of one of `event_types` at a position in (after, up_to]
    (`up_to` None: above `after`)."""
    select = _STREAMS_OF_TYPES.format(types=", ".join(["%s"] * len(event_types)))
    params: list[str | int]
    if up_to is None:
        sql, params = select + _POSITIONS_AFTER, [*event_types, after]
    elif after:
        sql, params = select + _POSITIONS_BETWEEN, [*event_types, after, up_to]
    else:
        sql, params = select + _POSITIONS_UP_TO, [*event_types, up_to]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {stream for (stream,) in cursor.fetchall()}
