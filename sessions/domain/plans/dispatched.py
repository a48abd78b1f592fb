"""Which agent runs a dispatched session, and where (docs/rules.md, "Running the plan").

`ct dispatch` says it in the first heartbeat it sends for a session it launched, right
after the claim's start: `dispatched: claude-code on build-01`. The tower reads it back
from that note, so a plan page can show each running or parked node's agent and machine
without a field of its own. A person could write the same words in a progress note: the
page would then say so, which is all the note claims."""

from datetime import datetime
from typing import NamedTuple

from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import PROGRESS

DISPATCHED = "dispatched: "
# The note comes at once after the claim's start (seq 1); the agent's hooks may race it
# by an event or two. Reading only a stream's first events keeps the read bounded.
DISPATCH_NOTE_SEQ_MOST = 5


class Dispatched(NamedTuple):
    agent: str  # the `--agent`, or the command's program
    host: str  # the machine the dispatcher runs on
    at: datetime  # when it launched the agent


def dispatched(event: EventRecord) -> Dispatched | None:
    """What a dispatcher's note says, or None when the event is not one."""
    note = event.note or ""
    if event.type != PROGRESS or event.seq > DISPATCH_NOTE_SEQ_MOST:
        return None
    if not note.startswith(DISPATCHED) or " on " not in note:
        return None
    agent, _, host = note.removeprefix(DISPATCHED).rpartition(" on ")
    return Dispatched(agent, host, event.timestamp) if agent and host else None
