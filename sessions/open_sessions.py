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

The watermark is `store.SafePosition`, which is where the two databases differ.

The model is only caught up outside transactions, where a reader sees committed rows
only. Restoring an older copy of the database under a running server needs a restart.
"""

import threading
from dataclasses import dataclass, field

from django.db import connection

from . import store, vocabulary


@dataclass
class _Model:
    open: set = field(default_factory=set)
    safe: store.SafePosition = field(default_factory=store.SafePosition)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def watermark(self) -> int:
        return self.safe.position

    def forget(self) -> None:
        self.open, self.safe = set(), store.SafePosition()

    def catch_up(self) -> None:
        if connection.in_atomic_block:
            # Inside a transaction a reader sees its own rows, which may be rolled back.
            return
        with connection.cursor() as cursor:
            watermark = self.safe.advance(cursor)
            if watermark < self.watermark:
                # The table lost rows, which only a restore of the database does.
                self.forget()
                watermark = self.safe.advance(cursor)
        if watermark > self.watermark:
            started = store.streams_of_type(vocabulary.START, self.watermark, watermark)
            closed = store.streams_of_type(vocabulary.CLOSE, self.watermark, watermark)
            self.open = (self.open | started) - closed
            self.safe.position = watermark


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


def safe_position() -> int:
    """The position at or below which no event can still appear (`store.SafePosition`),
    as this process has seen it: the global feed reads up to it."""
    model = _model()
    with model.lock:
        model.catch_up()
        return model.watermark
