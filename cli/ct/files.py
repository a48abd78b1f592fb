"""The files `ct` keeps, readable by their user only: the login (config folder) and the
state (state folder): what it knows of each session, which session is whose, and the
spool of events that could not be sent.

Racing processes write them (Claude Code runs an event's hooks in parallel), so every
change happens under an exclusive `flock` and lands whole: a JSON state is replaced by
rename, a spool line is appended with one write."""

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ct import environment


class Busy(Exception):
    """A lock was not free before the deadline."""


def config_home() -> Path:
    return environment.xdg_folder("XDG_CONFIG_HOME", ".config") / "control-tower"


def state_home() -> Path:
    return environment.xdg_folder("XDG_STATE_HOME", ".local/state") / "control-tower"


def private_folder(path: Path) -> Path:
    """`path`, made if missing, and every folder from `ct`'s own (`control-tower`) down
    to it, readable by their user only: other users cannot list which Claude Code
    sessions there are. A folder found open is closed again."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    chain = [path, *path.parents]
    names = [folder.name for folder in chain]
    own = chain[: names.index("control-tower") + 1] if "control-tower" in names else [path]
    for folder in own:
        if os.stat(folder).st_mode & 0o077:
            os.chmod(folder, 0o700)
    return path


def writable(folder: Path) -> bool:
    """Whether `ct` can keep files in `folder` (made if missing)."""
    try:
        private_folder(folder)
    except OSError:
        return False
    return os.access(folder, os.W_OK)


def write_private(path: Path, text: str | bytes) -> None:
    """Replace `path` with `text` at once, readable by its user only."""
    private_folder(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(text.encode() if isinstance(text, str) else text)
    os.replace(temporary, path)


@contextmanager
def locked(path: Path, deadline: float | None = None, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive lock on `path` (made if missing). Waits until `deadline`
    (`time.monotonic()`), or not at all with `wait` off; `Busy` if it stays taken."""
    private_folder(path.parent)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait or (deadline is not None and time.monotonic() >= deadline):
                    raise Busy(str(path)) from None
                time.sleep(0.005)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


def read_json(path: Path) -> dict:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def update_json(
    path: Path, change: Callable[[dict], dict | None], deadline: float | None = None
) -> dict:
    """Apply `change` to the JSON object at `path` under its lock and save what it
    leaves (the same dict, changed in place, or a new one); the saved object."""
    with locked(path.with_name(path.name + ".lock"), deadline):
        found = read_json(path)
        changed = change(found)
        kept = found if changed is None else changed
        write_private(path, json.dumps(kept, sort_keys=True) + "\n")
        return kept


def state_file(folder: str, name: str) -> Path:
    """The state file of `name` (a session's id, a Claude Code session's) in `folder`."""
    return state_home() / folder / f"{_safe(name)}.json"


def state_lines(folder: str, name: str) -> Path:
    """The state file of `name` in `folder` that is written a line at a time."""
    return state_home() / folder / f"{_safe(name)}.jsonl"


def append_line(path: Path, line: str) -> None:
    """Add `line` to the file at `path` (readable by its user only) in one write, so
    that the lines of racing writers never interleave."""
    private_folder(path.parent)
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(line.encode() + b"\n")


def stream_state_path(session: str) -> Path:
    """What `ct` last learnt of a session: its seq, status and last event's position."""
    return state_file("sessions", session)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:200] or "_"


def remember(session: str | None, answer: dict) -> None:
    """Keep what the tower's answer says of `session` (an append's answer, with the
    session's view and the event's position, or a session's view itself): a later `ct
    wait` starts at the position, and a hook's heartbeat expects the seq. An older
    answer arriving late changes nothing."""
    view = answer.get("session", answer)
    if session is None or not isinstance(view, dict) or "seq" not in view:
        return
    seq, position = view["seq"], answer.get("position")

    def newer(known: dict) -> None:
        if known.get("seq", 0) <= seq:
            known.update(seq=seq, status=view.get("status"))
            if position is not None:
                known["position"] = position

    with contextlib.suppress(OSError):  # what is kept is a cache: a state folder gone loses it
        update_json(stream_state_path(session), newer)


def expect_status(session: str, status: str) -> None:
    """The status an event just sent or spooled leads to, until its answer comes."""

    def expected(known: dict) -> None:
        known["status"] = status

    with contextlib.suppress(OSError):
        update_json(stream_state_path(session), expected)


def await_answer(session: str, waiting: bool) -> None:
    """Whether the session's agent waits for a person's answer it has not been told yet:
    set by its own block (`ct block`, a budget's pause); cleared once the answer reaches
    it (its hook hands it over, its `ct wait` returns, a dispatcher resumes it with it).
    Kept apart from the status, which any answer of the tower's moves."""

    def mark(known: dict) -> None:
        known["awaiting_answer"] = waiting

    with contextlib.suppress(OSError):
        update_json(stream_state_path(session), mark)


def awaits_answer(session: str) -> bool:
    return bool(read_json(stream_state_path(session)).get("awaiting_answer"))


class Spool:
    """Events that could not reach the tower, one JSON line each, in the order spooled.

    Appending takes the spool's lock for one write. Sending takes a second lock, the
    flush lock, for the whole flush, so two flushes never send one line twice; a line
    leaves the file only after the tower has it (and a line sent again after a crash
    carries its idempotency key, so the tower answers with what it appended)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or state_home()
        self.path = self.folder / "spool.jsonl"
        self.lock = self.folder / "spool.lock"
        self.flush_lock = self.folder / "flush.lock"

    def add(self, entry: dict, deadline: float | None = None) -> None:
        line = (json.dumps(entry, separators=(",", ":")) + "\n").encode()
        with locked(self.lock, deadline):
            descriptor = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                size = os.fstat(descriptor).st_size
                if size and os.pread(descriptor, 1, size - 1) != b"\n":
                    line = b"\n" + line  # after a line cut by a crash: a line of its own
                os.write(descriptor, line)
            finally:
                os.close(descriptor)

    def pending(self) -> bool:
        try:
            return self.path.stat().st_size > 0
        except OSError:
            return False

    def _lines(self) -> list[bytes]:
        try:
            return [line for line in self.path.read_bytes().splitlines() if line.strip()]
        except OSError:
            return []

    def first(self, deadline: float | None = None) -> bytes | None:
        """The oldest line as written (`entry_of` tells whether it is an entry)."""
        with locked(self.lock, deadline):
            found = self._lines()
        return found[0] if found else None

    def drop_first(self, deadline: float | None = None) -> None:
        """Remove the oldest line (the flush holder's, once sent or set aside)."""
        with locked(self.lock, deadline):
            rest = self._lines()[1:]
            write_private(self.path, b"".join(line + b"\n" for line in rest))


def entry_of(line: bytes) -> dict | None:
    """The spool entry a line holds, or None for a line that is not one (cut by a crash,
    or written by something else): such a line is set aside, never a stop to the rest."""
    try:
        found = json.loads(line)
    except ValueError:
        return None
    if not isinstance(found, dict):
        return None
    method, path, body, key = (found.get(name) for name in ("method", "path", "body", "key"))
    session = found.get("session")
    if (
        method not in ("POST", "GET")
        or not isinstance(path, str)
        or not path.startswith("/")
        or not isinstance(body, dict)
        or not isinstance(key, str)
        or not key
        or not (session is None or isinstance(session, str))
    ):
        return None
    return found
