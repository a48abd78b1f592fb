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
from datetime import datetime
from typing import NamedTuple

from sessions import store
from sessions.domain import vocabulary, work
from sessions.readmodels.kept import ReadModel, committed_reads_only
from sessions.store import connections
from sessions.store import work as work_rows


@dataclass
class _Model:
    open: set = field(default_factory=set)
    # Of the open sessions, where each one's current blocked run began (the first block
    # after its last unblock), for those in one: the Needs attention strip's "blocked
    # for". Blocks and unblocks move it, so it is caught up like the set.
    runs: dict = field(default_factory=dict)
    # Of the open sessions whose work names a repo and a branch, where each works (see
    # `work_marks`) and when it was opened; and of those with red checks at their head,
    # since when: duplicate work and red checks are judged over every open session at
    # each board render, so new work reports move them, like runs.
    places: dict = field(default_factory=dict)
    failing: dict = field(default_factory=dict)
    safe: store.SafePosition = field(default_factory=store.SafePosition)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def watermark(self) -> int:
        return self.safe.position

    def forget(self) -> None:
        self.open, self.runs, self.places, self.failing = set(), {}, {}, {}
        self.safe = store.SafePosition()

    def catch_up(self) -> None:
        if not committed_reads_only():
            # Inside a transaction a reader sees its own rows, which may be rolled back.
            return
        watermark = self.safe.advance()
        if watermark < self.watermark:
            # The table lost rows, which only a restore of the database does.
            self.forget()
            watermark = self.safe.advance()
        if watermark > self.watermark:
            started = store.streams_of_types([vocabulary.START], self.watermark, watermark)
            closed = store.streams_of_types([vocabulary.CLOSE], self.watermark, watermark)
            if self.watermark:
                runs = [vocabulary.BLOCK, vocabulary.UNBLOCK]
                moved = started | store.streams_of_types(runs, self.watermark, watermark)
            else:  # the first catch-up: every open session, not every block ever made
                moved = started
            worked = store.streams_of_types([vocabulary.WORK], self.watermark, watermark)
            self.open = (self.open | started) - closed
            self._catch_up_runs(moved & self.open, closed)
            self._catch_up_work(worked & self.open, closed)
            self.safe.position = watermark

    def _catch_up_runs(self, moved: set, closed: set) -> None:
        """Re-read the runs of the open sessions whose blocks moved. They are read whole,
        rows above the watermark included, which is harmless: `blocked_runs` folds those
        rows again, and a fold of rows already seen ends where they ended."""
        found = store.blocked_run_starts(sorted(moved)) if moved else {}
        for session in moved | closed:
            self.runs.pop(session, None)
        self.runs.update(found)

    def _catch_up_work(self, moved: set, closed: set) -> None:
        """Re-read the places and red checks of the open sessions that reported work
        (read whole, as runs are: harmless)."""
        _forget_and_read(self.places, self.failing, moved, closed)


class _OpenSessions(ReadModel):
    """One `_Model` per database."""

    def __init__(self) -> None:
        super().__init__()
        self.models: dict[str, _Model] = {}
        self.lock = threading.Lock()

    def model(self) -> _Model:
        with self.lock:
            return self.models.setdefault(connections.database_alias(), _Model())

    def forget(self) -> None:
        with self.lock:
            for model in self.models.values():
                with model.lock:
                    model.forget()


OPEN = _OpenSessions()


def _model() -> _Model:
    return OPEN.model()


def below_watermark() -> tuple[frozenset[str], int]:
    """(ids of the sessions open among those started at or below the watermark, the
    watermark). Sessions started above it are the caller's to find."""
    model = _model()
    with model.lock:
        model.catch_up()
        return frozenset(model.open), model.watermark


def blocked_runs() -> dict[str, datetime]:
    """Where the current blocked run of each open session in one began: the model's,
    with the blocks and unblocks above its watermark folded in (a block starts a run
    unless one is going on; an unblock ends it)."""
    model = _model()
    with model.lock:
        model.catch_up()
        runs, watermark = dict(model.runs), model.watermark
    for session, kind, moment in store.blocked_run_changes_after(watermark):
        if kind == vocabulary.BLOCK:
            runs.setdefault(session, moment)
        else:
            runs.pop(session, None)
    return runs


def _forget_and_read(places: dict, failing: dict, moved: set[str], gone: set[str]) -> None:
    """Drop the places and red checks of the `moved` and `gone` sessions, then read the
    `moved` ones' again: a few probes each (`store.work`)."""
    for session in moved | gone:
        places.pop(session, None)
        failing.pop(session, None)
    if not moved:
        return
    for session, (repo, branch, opened) in work_rows.places_of(sorted(moved)).items():
        since = work.place_since(work_rows.place_events(session))
        places[session] = Place(work.place_key(repo, branch), opened, since)
    for session in moved:
        since = work.failing_since(work_rows.head_and_checks(session))
        if since is not None:
            failing[session] = since


class Place(NamedTuple):
    """Where an open session works, for duplicate work."""

    place: tuple[str, str]  # (repo, lowered as GitHub compares names, branch)
    opened: datetime
    since: datetime | None  # when its repo and branch last became these


Places = dict[str, Place]


class WorkMarks(NamedTuple):
    # every open session whose current work names a repo and a branch
    places: Places
    # {session: since when} of every open session with red checks at its head
    failing: dict[str, datetime]


def work_marks() -> WorkMarks:
    """Where every open session works, and which have red checks: the model's, with the
    sessions that closed or reported work above its watermark read again."""
    model = _model()
    with model.lock:
        model.catch_up()
        found = WorkMarks(dict(model.places), dict(model.failing))
        watermark = model.watermark
    above = store.streams_of_types([vocabulary.CLOSE, vocabulary.WORK], watermark, None)
    if above:
        closed = store.streams_of_types([vocabulary.CLOSE], watermark, None)
        _forget_and_read(found.places, found.failing, above - closed, closed)
    return found


def safe_position() -> int:
    """The position at or below which no event can still appear (`store.SafePosition`),
    as this process has seen it: the global feed reads up to it."""
    model = _model()
    with model.lock:
        model.catch_up()
        return model.watermark
