"""The background flusher: when a hook leaves events in the spool (the tower was away),
the agent may never run again on this machine, so no later hook would send them. One
`ct` of its own, detached from the hook, sends them: it first tries again within a few
seconds, then doubles its wait up to a minute between tries, gives up after a day, and
exits once the spool is empty. One per user: it holds `flusher.lock` while it runs, and
a second one finds it taken and leaves at once."""

import subprocess
import sys
import time
from pathlib import Path

from ct import files, spooling
from ct.client import NotSignedIn, Tower

FIRST_WAIT_SECONDS = 2.0
LONGEST_WAIT_SECONDS = 60.0
GIVE_UP_AFTER_SECONDS = 24 * 3600.0
# One try's time to send what the spool holds (it goes on at the next try).
TRY_SECONDS = 30.0


def lock_path() -> Path:
    return files.state_home() / "flusher.lock"


def running() -> bool:
    """Whether a flusher holds the lock now."""
    try:
        with files.locked(lock_path(), wait=False):
            return False
    except files.Busy:
        return True


def start() -> None:
    """Start a background flusher, detached (its own session, no terminal, no pipes the
    agent waits on), unless one runs already."""
    if running():
        return
    subprocess.Popen(
        [sys.executable, "-m", "ct.flusher"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def waits() -> list[float]:
    """The pauses before each try, adding up to a day."""
    found, wait, total = [], FIRST_WAIT_SECONDS, 0.0
    while total < GIVE_UP_AFTER_SECONDS:
        found.append(wait)
        total += wait
        wait = min(wait * 2, LONGEST_WAIT_SECONDS)
    return found


def flush_until_empty(tower: Tower, spool: files.Spool) -> bool:
    """Try, wait, try again, until the spool is empty (True) or a day has gone (False).
    Each try that leaves events behind says so in the hook log."""
    from ct.hooklog import log

    for attempt, wait in enumerate(waits(), start=1):
        time.sleep(wait)
        if not spool.pending():
            return True
        if spooling.flush(tower, spool, time.monotonic() + TRY_SECONDS):
            return True
        log(f"background flush: try {attempt} left events in the spool ({tower.url})")
    log("background flush: gave up after a day; the next ct call sends the spool")
    return not spool.pending()


def main() -> int:
    try:
        with files.locked(lock_path(), wait=False):
            flush_until_empty(Tower.configured(), files.Spool())
    except (files.Busy, NotSignedIn, OSError):
        pass  # another flusher has it, or there is nothing this one could do
    return 0


if __name__ == "__main__":
    sys.exit(main())
