"""Sending through the spool: an event that cannot reach the tower waits in the spool,
and the next call that reaches the tower sends every waiting event first, oldest first,
each under its own idempotency key: nothing lost, nothing doubled."""

import time

from ct import files
from ct.client import REFUSED, Refused, Tower, Unreachable, new_key

# A spooled heartbeat expects the session's seq as known when it is sent, not when it
# was spooled: the events spooled before it move the seq on.
EXPECT_LATEST = "latest"


def entry(method: str, path: str, body: dict, session: str | None = None) -> dict:
    """A request to spool, with its idempotency key made now."""
    return {
        "method": method,
        "path": path,
        "body": body,
        "key": new_key(),
        "session": session,
    }


def send(tower: Tower, request: dict, spool: files.Spool, deadline: float) -> bool:
    """Spool `request` and flush: True when the spool was emptied (the request sent).
    With the state folder unwritable there is no spool: the request goes straight to
    the tower (lost only if the tower is away too)."""
    try:
        spool.add(request, deadline)
    except OSError:
        return _send_unspooled(tower, request, deadline)
    return flush(tower, spool, deadline)


def _sent(tower: Tower, entry: dict, deadline: float) -> dict:
    """The tower's answer to one spool entry, under its own idempotency key."""
    return tower.request(
        entry["method"],
        entry["path"],
        body=_body(entry),
        key=entry["key"],
        timeout=deadline - time.monotonic(),
    )


def _send_unspooled(tower: Tower, request: dict, deadline: float) -> bool:
    try:
        answer = _sent(tower, request, deadline)
    except (Unreachable, Refused):
        return False
    files.remember(request.get("session"), answer)
    return True


def flush(tower: Tower, spool: files.Spool, deadline: float) -> bool:
    """Send what the spool holds, unless another process is already at it (it looks
    again after letting go, so a line spooled meanwhile is not left behind). True when
    the spool is empty."""
    while spool.pending():
        if time.monotonic() >= deadline:
            return False
        try:
            with files.locked(spool.flush_lock, wait=False):
                if not _send_all(tower, spool, deadline):
                    return False
        except files.Busy:
            return False
    return True


def _send_all(tower: Tower, spool: files.Spool, deadline: float) -> bool:
    """Send the spool's lines in order while the tower answers; False when it stops
    answering (the rest stays) or the time is up."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        line = spool.first()
        if line is None:
            return True
        waiting = files.entry_of(line)
        if waiting is None:
            _set_aside_line(line)
            spool.drop_first()
            continue
        try:
            answer = _sent(tower, waiting, deadline)
        except Unreachable:
            return False
        except Refused as refusal:
            if refusal.exit_status != REFUSED:
                return False  # not signed in or not allowed: keep it until that is fixed
            _set_aside(waiting, refusal)  # it can never be taken (e.g. a closed session)
        else:
            files.remember(waiting.get("session"), answer)
        spool.drop_first()


def _body(waiting: dict) -> dict:
    body = dict(waiting["body"])
    if body.get("expected_seq") == EXPECT_LATEST:
        session = waiting.get("session")
        known = files.read_json(files.stream_state_path(session)) if session else {}
        body["expected_seq"] = known.get("seq")
        if body["expected_seq"] is None:
            del body["expected_seq"]
    return body


def _set_aside(waiting: dict, refusal: Refused) -> None:
    """A refused line is kept aside in `refused/spool.jsonl`, so no word vanishes unseen."""
    refused = {**waiting, "refused": {"code": refusal.code, "detail": refusal.detail}}
    files.Spool(files.state_home() / "refused").add(refused)


def _set_aside_line(line: bytes) -> None:
    """A line that is not an entry is kept aside as it was, with why."""
    text = line.decode("utf-8", errors="replace")
    why = {"code": "not_an_entry", "detail": "this spool line is not a request ct wrote"}
    files.Spool(files.state_home() / "refused").add({"line": text, "refused": why})
