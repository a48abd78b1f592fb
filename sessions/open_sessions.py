"""Which sessions are open: a read model each process keeps in memory, caught up from
the event table in id order.

Asked of SQL alone, "which sessions are open" is an anti-join over every session ever
started, so a long closed history slowed the board down (bench/RESULTS.md, §3). But a
session starts once and a close is final (no transition leaves `closed`), so the set of
open sessions only ever gains the sessions of new start rows and loses those of new close
rows. Each process folds the start and close rows it has not seen yet into a set, up to a
*watermark*: an id at or below which no row can still appear. Rows above the watermark
are asked of SQL, as before, which is cheap because they are few. Nothing is written
anywhere; the set is rebuilt from the table when a process first needs it.

The watermark is where the two databases differ:

- SQLite has one writer at a time (transactions begin IMMEDIATE), so rows become visible
  in id order: the newest id seen is a watermark.
- PostgreSQL hands out ids as rows are inserted, and transactions commit in any order:
  a row with a lower id can become visible after a higher one was seen. Every writer
  takes its transaction id before its event ids (`append._writing`), so once every
  transaction that was running when an id M was seen has ended (a later snapshot's xmin
  has reached that moment's xmax), no row with an id up to M can appear any more. A
  transaction left open anywhere on the server holds the watermark back: the board
  then asks SQL about more rows, which is slower but never wrong.

The model is only caught up outside transactions, where a reader sees committed rows
only. Restoring an older copy of the database under a running server needs a restart.
"""

import threading
from dataclasses import dataclass, field

from django.db import connection

from . import vocabulary

# The sessions of one type's rows in an id range. A session starts once and a close is
# final, so the open set is (open | started) - closed whatever order the rows came in.
_ROWS_OF_TYPE = "SELECT session FROM tower_event WHERE type = '{type}' AND {ids}"
_IDS_BETWEEN = "id > %s AND id <= %s"
# The first fold: the unary plus keeps the planner off the primary key, so that it reads
# the type's partial index instead of the whole table (the fold took 328 -> 158 ms in
# SQLite at 100,000 closed sessions, bench/RESULTS.md §3).
_IDS_UP_TO = "+id <= %s"
_SEEN_POSTGRESQL = (
    "SELECT MAX(id), pg_snapshot_xmin(pg_current_snapshot())::text::bigint,"
    " pg_snapshot_xmax(pg_current_snapshot())::text::bigint FROM tower_event"
)


@dataclass
class _Model:
    watermark: int = 0
    open: set = field(default_factory=set)
    # PostgreSQL: (newest id seen, the snapshot's xmax then), oldest first.
    sightings: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def forget(self):
        self.watermark, self.open, self.sightings = 0, set(), []

    def next_watermark(self, cursor):
        if connection.vendor == "sqlite":
            cursor.execute("SELECT MAX(id) FROM tower_event")
            return cursor.fetchone()[0] or 0
        cursor.execute(_SEEN_POSTGRESQL)
        newest, xmin, xmax = cursor.fetchone()
        newest = newest or 0
        settled = [seen for seen, then in self.sightings if then <= xmin]
        self.sightings = [(seen, then) for seen, then in self.sightings if then > xmin]
        if not self.sightings or self.sightings[-1][0] != newest:
            self.sightings.append((newest, xmax))
            # While a long transaction holds xmin back, keep the latest sightings only:
            # any one of them is a valid watermark once settled.
            del self.sightings[:-100]
        return max(settled, default=self.watermark)

    def catch_up(self):
        if connection.in_atomic_block:
            # Inside a transaction a reader sees its own rows, which may be rolled back.
            return
        with connection.cursor() as cursor:
            watermark = self.next_watermark(cursor)
            if watermark < self.watermark:
                # The table lost rows, which only a restore of the database does.
                self.forget()
                watermark = self.next_watermark(cursor)
            if watermark > self.watermark:
                started = self.rows(cursor, vocabulary.START, watermark)
                closed = self.rows(cursor, vocabulary.CLOSE, watermark)
                self.open = (self.open | started) - closed
                self.watermark = watermark

    def rows(self, cursor, event_type, watermark):
        """The sessions of `event_type` rows above our watermark, up to `watermark`."""
        if self.watermark:
            ids, params = _IDS_BETWEEN, [self.watermark, watermark]
        else:
            ids, params = _IDS_UP_TO, [watermark]
        cursor.execute(_ROWS_OF_TYPE.format(type=event_type, ids=ids), params)
        return {session_id for (session_id,) in cursor.fetchall()}


_models = {}
_models_lock = threading.Lock()


def _model():
    with _models_lock:
        return _models.setdefault(connection.alias, _Model())


def below_watermark():
    """(ids of the sessions open among those started at or below the watermark, the
    watermark). Sessions started above it are the caller's to find."""
    model = _model()
    with model.lock:
        model.catch_up()
        return frozenset(model.open), model.watermark


def forget():
    """Drop every process-held set, e.g. after the database was emptied or restored."""
    with _models_lock:
        for model in _models.values():
            with model.lock:
                model.forget()
