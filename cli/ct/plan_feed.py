"""A dispatcher's wait for its plan to move (docs/rules.md, "Running the plan": nothing to
claim, wait on the feed — a long poll, never a fixed interval).

Idle from the moment a claim finds nothing, it asks the tower's feed, narrowed to the
plan (its events and those of the sessions on its nodes), to answer as soon as an event
lands after that moment: a need closed, a pull request merged, an amend, a person's
answer to a parked run. Then a claim is worth trying again; and at the latest after
`IDLE_CLAIM_SECONDS` all the same, since a node lapses with time alone."""

import time

from ct.client import Refused, Tower, Unreachable

IDLE_CLAIM_SECONDS = 15
WAIT_MOST = 15  # one long poll's wait, below the tower's most (20 s)
ANSWERED_AT_ONCE_PAUSE = 0.5


class Interrupted(Exception):
    """A stop that came during a long poll: raised by the stop's signal handler."""


class PlanFeed:
    def __init__(self, tower: Tower, plan: str) -> None:
        self.tower, self.plan = tower, plan
        self.after: int | None = None  # the feed's position when it went idle; None: not idle
        self.until = 0.0  # when a claim is tried again all the same (monotonic)
        self.polling = False  # in a long poll, which a stop interrupts
        self.mark: int | None = None  # the feed's position before the latest claim

    def before_claim(self) -> None:
        """The feed's position before a claim: if the claim finds nothing, the wait
        starts there, so an event landing between the claim and the wait is not missed."""
        try:
            page = self.tower.request("GET", "/feed", query={"after": 0, "limit": 0})
            self.mark = page["next_after"]
        except (Refused, Unreachable):
            self.mark = None

    def go_idle(self) -> None:
        """Nothing to claim: follow the plan's feed from before the claim until it moves."""
        self.until = time.monotonic() + IDLE_CLAIM_SECONDS
        self.after = self.mark

    def moved(self) -> None:
        """Something this dispatcher did may make nodes ready (a close): claim at once."""
        self.after = None

    def worth_claiming(self) -> bool:
        return self.after is None or time.monotonic() >= self.until

    def seconds_left(self) -> float:
        return min(WAIT_MOST, self.until - time.monotonic())

    def wait(self, seconds: float) -> None:
        """Until the plan moves (then no longer idle), or `seconds` pass. A tower that
        answers at once with nothing (busy, older, or away) costs a short pause, never a
        busy loop."""
        if self.after is None or seconds <= 0:
            return
        began = time.monotonic()
        query = {"after": self.after, "plan": self.plan, "limit": 1, "wait": seconds}
        page = None
        try:
            self.polling = True
            page = self.tower.request("GET", "/feed", query=query, timeout=seconds + 10)
        except (Refused, Unreachable):
            pass
        finally:
            self.polling = False
        if page is not None:
            self.after = None if page["items"] else page["next_after"]
        if (page is None or not page["items"]) and time.monotonic() - began < seconds / 2:
            time.sleep(ANSWERED_AT_ONCE_PAUSE)
