"""What a process keeps of derived values, per database: a bounded map, safe across
threads, that drops the least recently used entries beyond its bound. The read models
that keep something per stream (`time_spent`, `plan_graphs`, `plan_sessions`) hold one
each; nothing in
it is ever written anywhere."""

import threading
from collections import OrderedDict

from django.db import connection


class Kept:
    def __init__(self, bound: int) -> None:
        self.bound = bound
        self._entries: OrderedDict[tuple[str, str], object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, stream: str) -> object | None:
        """What is kept for `stream` in the current database, or None."""
        key = (connection.alias, stream)
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, stream: str, value: object) -> None:
        key = (connection.alias, stream)
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.bound:
                self._entries.popitem(last=False)

    def forget(self) -> None:
        """Drop everything, e.g. after the database was emptied or restored."""
        with self._lock:
            self._entries.clear()
