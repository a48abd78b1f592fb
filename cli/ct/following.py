"""Following along: `ct feed` (every event in order, after a position) and `ct wait`
(until a session is unblocked, closed or changed), both on the tower's feed, one small
request an interval."""

import argparse
import json
import time
from collections.abc import Callable
from typing import Literal

from ct import files
from ct.client import REFUSED, TIMED_OUT, Tower, Unreachable
from ct.commands import READING, Failed, command, say, session_of
from ct.lines import event_line, session_line

WAIT_UNTIL = ("unblocked", "closed", "changed")
FEED_PAGE = 100
# `ct wait` and `ct feed --follow` ask the feed this often: one small request each time.
DEFAULT_INTERVAL = 2.0


def feed_page(tower: Tower, after: int, stream: str | None = None, limit: int = FEED_PAGE) -> dict:
    query = {"after": after, "limit": limit, "stream": stream}
    return tower.request("GET", "/feed", query=query)


def _feed_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--after", type=int, default=0, metavar="P", help="start after position P")
    parser.add_argument("--stream", metavar="ID", help="only this session's or plan's events")
    parser.add_argument("--follow", action="store_true", help="keep following (Ctrl-C stops)")
    parser.add_argument("--interval", type=float, default=DEFAULT_INTERVAL, help=argparse.SUPPRESS)


@command("feed", "Every event in order, after a position.", _feed_flags, shared=READING)
def cmd_feed(args: argparse.Namespace, tower: Tower) -> None:
    after = args.after
    while True:
        page = feed_page(tower, after, args.stream)
        for item in page["items"]:
            print(json.dumps(item) if args.json else event_line(item), flush=True)
        after = page["next_after"]
        if not args.follow:
            if not args.json:
                print(f"next: ct feed --after {after}")
            return
        if not page["items"]:
            time.sleep(args.interval)


def _wait_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="SESSION", nargs="?")
    parser.add_argument("--until", choices=WAIT_UNTIL, required=True)
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="give up after (exit 5)")
    parser.add_argument("--after", type=int, metavar="P", help="follow from position P")
    parser.add_argument(
        "--interval",
        type=float,
        default=DEFAULT_INTERVAL,
        metavar="SECONDS",
        help=f"between feed requests (default {DEFAULT_INTERVAL:g})",
    )


@command(
    "wait",
    "Wait until a session is unblocked, closed or changed.",
    _wait_flags,
    shared=READING,
)
def cmd_wait(args: argparse.Namespace, tower: Tower) -> None:
    """Follow the feed narrowed to the session from the position of the last event this
    machine's `ct` appended to it (a block, typically), so that an answer that landed
    between the block and the wait is not missed; knowing none, from now on. A wait the
    view shows is already over, with nothing on the feed to say more, ends at once.

    A tower that stops answering (a restart, a deploy) is asked again at every interval
    until `--timeout`, which also bounds each request: the wait is never lost to a
    restart, and never outlives its timeout."""
    session = args.target or session_of(args)
    deadline = None if args.timeout is None else time.monotonic() + args.timeout
    ask = _riding_out(tower, deadline, args)
    after = args.after
    if after is None:
        after = files.read_json(files.stream_state_path(session)).get("position")
    if after is None:  # now, taken before the view: nothing falls between the two
        after = ask("/feed", {"after": 0, "limit": 0, "stream": session})["next_after"]
    view = ask(f"/sessions/{session}")
    over = _over(args.until, view)
    while True:
        page = ask("/feed", {"after": after, "limit": FEED_PAGE, "stream": session})
        for item in page["items"]:
            note = _reached(args.until, item)
            if note is not False:
                view = ask(f"/sessions/{session}")
                _heard(session, view)
                say(args, view, _waited_line(args.until, view, note))
                return
        after = page["next_after"]
        if page["items"]:
            continue
        if over:
            _heard(session, view)
            say(args, view, _waited_line(args.until, view, view.get("next_action")))
            return
        _pause(args, deadline, session)


def _heard(session: str, view: dict) -> None:
    """What a wait ends on is known here, and an answer it ends on is heard: an agent's
    own `ct wait` told it."""
    files.remember(session, view)
    if view["status"] != "blocked":
        files.await_answer(session, False)


# The longest one request of a wait may take when no --timeout bounds it.
WAIT_REQUEST_SECONDS = 10.0


def _riding_out(
    tower: Tower, deadline: float | None, args: argparse.Namespace
) -> Callable[..., dict]:
    """`ask(path, query)`: a GET that, while the tower does not answer, asks again after
    each interval until the wait's deadline (then `Failed`, timed out)."""

    def ask(path: str, query: dict | None = None) -> dict:
        while True:
            left = WAIT_REQUEST_SECONDS
            if deadline is not None:
                left = min(left, deadline - time.monotonic())
            try:
                return tower.request("GET", path, query=query, timeout=left)
            except Unreachable:
                _pause(args, deadline, args.target or session_of(args))

    return ask


def _pause(args: argparse.Namespace, deadline: float | None, session: str) -> None:
    """Sleep one interval, or until the deadline; past it, the wait has timed out."""
    if deadline is not None and time.monotonic() >= deadline:
        raise Failed(f"{session}: not {args.until} after {args.timeout:g} s", TIMED_OUT)
    pause = args.interval
    if deadline is not None:
        pause = max(0.0, min(pause, deadline - time.monotonic()))
    time.sleep(pause)


def _over(until: str, view: dict) -> bool:
    if until == "unblocked":
        if view["status"] == "closed":
            raise Failed(f"{view['id']} was closed, never to be unblocked", REFUSED)
        return view["status"] != "blocked"
    return until == "closed" and view["status"] == "closed"


def _reached(until: str, item: dict) -> str | Literal[False] | None:
    """The event's note when it is what the wait waits for (None: no note); False if not."""
    if until == "changed":
        return item.get("note") or item.get("reason")
    if until == "unblocked" and item["type"] == "session_unblock":
        return item.get("note")
    if item["type"] == "session_close":
        if until == "unblocked":
            raise Failed(f"{item['session']} was closed before it was unblocked", REFUSED)
        return item.get("note")
    return False


def _waited_line(until: str, view: dict, note: str | None) -> str:
    said = f"\n{note}" if note else ""
    return f"{until}: {session_line(view)}{said}"
