"""A dispatched agent's processes: ended as a whole group, however they were left, and
how their end is told (docs/rules.md, "Running the plan": nothing outlives its session)."""

import contextlib
import os
import signal
import subprocess
from pathlib import Path

STOP_GRACE_SECONDS = 10  # SIGTERM, then SIGKILL this long after


def ending(code: int) -> str:
    """How a process ended, as a close's note says it: "exit status 3", "killed by
    SIGKILL"."""
    if code >= 0:
        return f"exit status {code}"
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


def runs_in(pid: int, folder: Path) -> bool:
    """Whether process `pid` runs in `folder` (its working folder is in it, or was, when
    the folder has been removed under it)."""
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd").removesuffix(" (deleted)")
    except OSError:
        return False
    return Path(cwd).is_relative_to(folder)


def end_group(process: subprocess.Popen) -> None:
    """The process group ended: SIGTERM, then SIGKILL after `STOP_GRACE_SECONDS`; and
    whatever of the group outlived its leader, killed."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # stragglers of a leader that ended
