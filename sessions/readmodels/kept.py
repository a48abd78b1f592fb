"""What a process keeps of derived values: the one protocol of every read model.

A read model is rebuilt from the event table when a process first needs it and caught
up by position (or by a stream's last row) after that; nothing in it is ever written
anywhere. Each one is a `ReadModel`, and every `ReadModel` is registered once, here, so
that `forget_all()` drops them all (a test's emptied database, a restored backup) and
`appended(...)` tells them all of an append this process committed.

`Kept` is the common kind: a bounded map per database, safe across threads, that drops
the least recently used entries beyond its bound and keeps a value only when its guard
says the value was read from committed rows.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from sessions.domain.records import EventRecord
from sessions.store import connections

_REGISTRY: list["ReadModel"] = []
# The models that take in an append (those whose `appended` does something): every
# append tells them, and only them.
_LISTENING: list["ReadModel"] = []
_registry_lock = threading.Lock()


class ReadModel:
    """Something a process keeps of derived values, registered once on creation."""

    def __init__(self) -> None:
        with _registry_lock:
            _REGISTRY.append(self)
            if type(self).appended is not ReadModel.appended:
                _LISTENING.append(self)

    def forget(self) -> None:
        """Drop everything kept, for every database."""
        raise NotImplementedError

    def appended(self, previous: EventRecord, event: EventRecord) -> None:
        """`event` was just committed after `previous` in its stream by this process.
        A model that can take it in without asking again does; by default nothing."""


def registered() -> tuple["ReadModel", ...]:
    """Every read model this process has made (docs/design.md lists them all)."""
    with _registry_lock:
        return tuple(_REGISTRY)


def forget_all() -> None:
    """Drop what every read model keeps, e.g. after the database was emptied or restored."""
    for model in registered():
        model.forget()


def appended(previous: EventRecord, event: EventRecord) -> None:
    """Tell every read model that takes appends in of one this process committed."""
    with _registry_lock:
        models = list(_LISTENING)
    for model in models:
        model.appended(previous, event)


# The guards: when a value read now may be kept. A read outside any transaction sees
# committed rows only. A transaction of its own (none around it) that holds its streams'
# locks and has written nothing yet sees the same; its caller says so by choosing it.
def committed_reads_only() -> bool:
    return connections.reads_committed_only()


def own_transaction() -> bool:
    return not connections.in_nested_transaction()


def always() -> bool:
    """For values keyed by the whole row they were read up to (a rolled-back row's key
    is never met again)."""
    return True


class Kept(ReadModel):
    """A bounded map per database, least recently used dropped first."""

    def __init__(self, bound: int, keep_when: Callable[[], bool] = committed_reads_only) -> None:
        super().__init__()
        self.bound = bound
        self.keep_when = keep_when
        self._entries: OrderedDict[tuple[str, Hashable], object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> object | None:
        """What is kept for `key` in the current database, or None."""
        entry = (connections.database_alias(), key)
        with self._lock:
            value = self._entries.get(entry)
            if value is not None:
                self._entries.move_to_end(entry)
            return value

    def put(self, key: Hashable, value: object) -> None:
        """Keep `value` for `key`, if the guard allows it now."""
        if not self.keep_when():
            return
        entry = (connections.database_alias(), key)
        with self._lock:
            self._entries[entry] = value
            self._entries.move_to_end(entry)
            while len(self._entries) > self.bound:
                self._entries.popitem(last=False)

    def forget(self) -> None:
        with self._lock:
            self._entries.clear()
