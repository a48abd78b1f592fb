"""What the tests of the real agents share: bob holding src/billing in acme/shop (for the
reservation tests), an agent's process run to its end, and a held model's first answer
let go once the test has acted on the agent's session."""

import subprocess

from sessions.domain.vocabulary import PLAN_CREATE, START
from sessions.models import Event
from sessions.rules.append import append_event
from tests.support.dispatching import wait_for


def bob_holds_billing(bob, agent: str | None = None) -> None:
    """Plan p on acme/shop, whose node billing holds src/billing, run by bob's session
    bobs (started by `agent`, when given)."""
    nodes = [{"key": "billing", "title": "Billing", "paths": ["src/billing"]}]
    append_event("p", PLAN_CREATE, {"title": "Shop", "repo": "acme/shop", "nodes": nodes}, user=bob)
    started = {"plan": "p", "node": "billing", **({"agent": agent} if agent else {})}
    append_event("bobs", START, started, user=bob)


def finished(process: subprocess.Popen, timeout: float = 150) -> str:
    """The agent's standard output, once it exited 0."""
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        process.kill()
    assert process.returncode == 0, out + err
    return out


def held_until(model, prefix: str, act) -> None:
    """Once the agent waits for its model's first answer (its session `prefix-…` started),
    run `act(session)`, then let the model answer."""
    try:
        assert wait_for(lambda: model.requests, 90)
        assert wait_for(lambda: Event.objects.filter(session__startswith=prefix).exists(), 10)
        act(Event.objects.get(session__startswith=prefix, seq=1).session)
    finally:
        model.gate.set()
