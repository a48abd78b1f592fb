"""A hook's hard deadline: the agent waits for the hook, so the hook's whole run, its own
work included, ends by its deadline whatever it was doing. Its network calls and its
reservation check already stop at the deadline and let the agent go on; this is the
backstop for anything else that runs long (a slow disk, a pathological input)."""

import contextlib
import signal
import time
from collections.abc import Iterator


class Overran(BaseException):
    """The hook ran past its deadline. A BaseException, so that no `except Exception` on
    the way up takes it for an error of its own and carries on."""


def _overran(signum: int, frame: object) -> None:
    raise Overran


@contextlib.contextmanager
def hard_stop(deadline: float) -> Iterator[None]:
    """Raise `Overran` in this (the main) thread once `time.monotonic()` passes
    `deadline`. Where there is no SIGALRM (Windows), only the cooperative checks hold."""
    if not hasattr(signal, "setitimer"):
        yield
        return
    before = signal.signal(signal.SIGALRM, _overran)
    signal.setitimer(signal.ITIMER_REAL, max(deadline - time.monotonic(), 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
