"""The hook engine: what every agent's hooks share (docs/rules.md, "The agent's side"). An
adapter per agent (`claude_code`, `codex`, `gemini`, `opencode`) maps its own events onto handlers
of a `Hook`, and says things in its own output format (`Agent`). The handlers speak
Claude Code's words (its event and tool names, its tools' fields): an agent whose input
names them otherwise gives a `translate` into them.

A `Hook` is one hook call: the agent's input, the tower, and the record its session's
hooks keep in the state folder (which tower session is theirs, the last heartbeat, the
messages handed over). It reports work and spend, throttles heartbeats, hands messages,
fences, pauses and reservations to the agent, and never breaks or stalls it: `run`
answers within `BUDGET_SECONDS`, cuts anything else short at `HARD_STOP_SECONDS`, always
exits 0, and spools what the tower could not take."""

import functools
import io
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ct import agent_names, environment, files, gitfacts, space, spooling, transcript
from ct.client import NotSignedIn, Refused, Tower, Unreachable
from ct.deadline import Overran, hard_stop
from ct.hook_record import HookRecord
from ct.hooklog import log
from ct.lines import budget_spent, doing, fenced, messages_text
from ct.text import clean

# The agent waits for a hook; ours answer well within 2 s, the interpreter's start
# included, whatever the tower does: the network and the reservation check stop at
# BUDGET_SECONDS, and anything still running at HARD_STOP_SECONDS is cut short.
BUDGET_SECONDS, HARD_STOP_SECONDS = 1.5, 1.8
# A record too long for one read is read on while this much of the hook's time is left.
READ_ON_LEFT = 0.6
# A heartbeat at most this often (v5: ten seconds, not a minute, which left a card's
# Doing and cost a minute behind).
HEARTBEAT_EVERY_SECONDS = 10
# What a paused agent may still run: its own wait for the person, and a look.
_WAITING_COMMANDS = ("ct wait", "ct show")
TITLE_MAX, REASON_MAX, NOTE_MAX, PROMPT_NOTE_MAX, MODEL_MAX = 200, 2000, 2000, 200, 100
# The tower's token fields, in the order of `transcript.COUNTS`.
USAGE_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
STATUS_AFTER = {"session_block": "blocked", "session_unblock": "active", "session_close": "closed"}


@dataclass(frozen=True)
class Agent:
    """An agent's adapter: the name of its records in the state folder, the prefix of
    the sessions its hooks start, its events' handlers (the one that starts a session
    named), how it passes text to its model (`say(payload, text, deny)`), how its record
    of spend is read, and how its ends are said."""

    name: str
    prefix: str
    start_event: str
    say: Callable[[dict, str, bool], dict]
    handlers: dict = field(default_factory=dict)
    # Counts one line of its own record of spend (`transcript.read`'s `count`).
    count_usage: Callable[[bytes, dict], None] = transcript.count_line
    # What its session's end is called, in a person's words, by SessionEnd's reason.
    ended: dict = field(default_factory=dict)
    title: str = "the agent"  # as people call it: "Claude Code ended the session"
    # Its hook input in Claude Code's words (event, tool and field names).
    translate: Callable[[dict], dict] = dict


def dispatched_session() -> str | None:
    """Under `ct dispatch` (`CT_DISPATCHED=1`): the session the dispatcher claimed, which
    the hooks adopt and report into (they start, block at a turn's end and close none)."""
    if environment.dispatched():
        return environment.session()
    return None


class Hook:
    """One hook call: the agent's input, the tower, and what this agent session's hooks
    remember (which tower session is its, when it last sent a heartbeat, the last message
    handed over)."""

    def __init__(self, payload: dict, tower: Tower, deadline: float, agent: Agent) -> None:
        self.payload, self.tower, self.deadline, self.agent = payload, tower, deadline, agent
        self.spool = files.Spool()
        agent_session = str(payload["session_id"])
        self.record_path = files.state_file(agent.name, agent_session)
        self.record = HookRecord.of(files.read_json(self.record_path))
        self.agent_session = agent_session

    @property
    def session(self) -> str | None:
        """The tower session this agent session's hooks report to. With no state
        folder to remember it in, the one its start names (generation 0)."""
        found = self.record.session
        if found is None and not files.writable(files.state_home()):
            return first_session_id(self.agent.prefix, self.agent_session)
        return found

    @property
    def open_session(self) -> str:
        """`session`, for what runs only once the hooks have one."""
        if (session := self.session) is None:
            raise LookupError("the hooks have no session yet")
        return session

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    @functools.cached_property
    def checkout(self) -> gitfacts.Checkout | None:
        """The checkout the tool ran in, read once a hook (its `.git` files)."""
        return gitfacts.checkout(Path(self.payload.get("cwd") or "."))

    @property
    def acting_agent(self) -> str:
        """Which program and version the events say wrote them (`agent_names`): found
        once per agent session, then kept in its record."""
        found = self.record.agent_label
        if found is None:
            found = agent_names.label(self.agent.name)
            self.remember(agent_label=found)
        return found

    def stamped(self, body: dict) -> dict:
        """`body` saying which agent wrote it."""
        return {**body, "agent": self.acting_agent}

    def remember(self, **changes: object) -> None:
        """Keep `changes` in this agent session's record (in memory at least: with
        the state folder unwritable, the hook goes on with what it has)."""
        wanted = self.record.changed(**changes)  # a field it has not fails here

        def change(known: dict) -> None:
            known.update(changes)

        try:
            self.record = HookRecord.of(files.update_json(self.record_path, change, self.deadline))
        except OSError:
            self.record = wanted

    def begin(self, session: str, generation: int) -> None:
        """This agent session is now `session`'s (its `generation`-th)."""
        self.remember(
            session=session,
            generation=generation,
            closed=False,
            fenced=None,
            handed_seq=0,
            last_heartbeat=0,
        )

    def known(self) -> dict:
        """What `ct` last learnt of the session (seq, status)."""
        return files.read_json(files.stream_state_path(self.open_session))

    def append(self, body: dict) -> bool:
        """Send an event to this session, through the spool (its status as the event
        leaves it is known at once, so that the hooks after it act on it)."""
        body = self.stamped(cleaned(body))
        if body["type"] in STATUS_AFTER:
            files.expect_status(self.open_session, STATUS_AFTER[body["type"]])
        path = f"/sessions/{self.session}/events"
        request = spooling.entry("POST", path, body, self.session)
        return spooling.send(self.tower, request, self.spool, self.deadline)

    def view(self) -> dict | None:
        """The session's view, or None when the tower does not answer in time; a
        tower that answers gets the spool first."""
        try:
            view = self.tower.request("GET", f"/sessions/{self.session}", timeout=self.left())
        except Unreachable:
            return None
        except Refused:  # it answered (the session's start may still be in the spool)
            view = None
        if self.spool.pending():
            spooling.flush(self.tower, self.spool, self.deadline)
        return view

    def report_work(self) -> None:
        """A `session_work` with the checkout's repo, branch and head commit, when they
        moved since the last one this agent session's hooks sent (read from `.git`:
        no git process, so a tool call costs a few small reads)."""
        found = self.checkout and self.checkout.facts
        if not found or found.commit is None:
            return  # no commit yet: nothing has landed (the title says the branch)
        if self.record.reported_work == list(found):
            return
        self.remember(reported_work=list(found))
        self.append({"type": "session_work", **found.report()})

    def report_usage(self) -> None:
        """A `session_usage` for each model whose totals moved since the last this agent
        session's hooks sent, read on from where they stopped in its transcript: only once
        the reading has caught up with it, so that no total sent is a part of one."""
        path = self.payload.get("transcript_path")
        if not isinstance(path, str) or not path:
            return
        reading = transcript.read(path, self.record.transcript, self.agent.count_usage)
        while reading.get("behind") and self.left() > READ_ON_LEFT:
            reading = transcript.read(path, reading, self.agent.count_usage)
        if reading.get("behind"):  # a long record: the next hooks read on, then send
            self.remember(transcript=reading)
            return
        sent = self.record.reported_usage
        moved = {m: c for m, c in reading.get("totals", {}).items() if sent.get(m) != c}
        self.remember(transcript=reading, reported_usage={**sent, **moved})
        for model, counts in moved.items():
            name = clean(model, MODEL_MAX, "line")
            if name:
                tokens = dict(zip(USAGE_COUNTS, counts, strict=True))
                self.append({"type": "session_usage", "model": name, **tokens})

    def heartbeat_due(self) -> bool:
        """Whether this call sends the minute's heartbeat: a look without the lock first
        (the throttled path), then a check-and-set under it, so that of racing hooks
        (parallel tool calls) one sends."""
        now = time.time()
        if now - self.record.last_heartbeat < HEARTBEAT_EVERY_SECONDS:
            return False

        def take(known: dict) -> None:
            if now - known.get("last_heartbeat", 0) >= HEARTBEAT_EVERY_SECONDS:
                known["last_heartbeat"] = now

        try:
            self.record = HookRecord.of(files.update_json(self.record_path, take, self.deadline))
        except OSError:
            return True  # no state folder to throttle by: every call is due
        return self.record.last_heartbeat == now

    def heartbeat(self, note: str | None = None, due: bool = False) -> dict | None:
        """A heartbeat saying `note` (what the agent is doing), at most one a minute
        unless `due` (a new prompt), never over messages not yet handed over: it expects
        the seq last seen, and on a conflict hands over what came (where the event can
        pass text) instead."""
        refused = self.record.refused  # a refusal since the last one is said at once
        if due or refused:
            self.remember(last_heartbeat=time.time())
        elif not self.heartbeat_due():
            return None  # throttled: no request at all
        self.report_usage()  # the usage goes with the heartbeat
        seq = self.known().get("seq")
        if refused:
            note = f"{refused}; then {note}" if note else refused
        body = self.stamped(cleaned({"type": "session_progress", "note": note}))
        written = self.record.written
        if written:  # the paths written since the last heartbeat go with it
            body["paths"] = written
        if written or refused:
            self.remember(written=[], refused=None)
        if seq is None or self.spool.pending():  # the seq is known once the spool has gone
            body["expected_seq"] = spooling.EXPECT_LATEST
            self.append(body)
            return None
        body["expected_seq"] = seq
        try:
            answer = self.tower.request(
                "POST", f"/sessions/{self.session}/events", body=body, timeout=self.left()
            )
        except Unreachable:
            body["expected_seq"] = spooling.EXPECT_LATEST
            self.append(body)
            return None
        except Refused as refusal:
            if written or refused:  # not sent: they go with the next one
                self.remember(written=written, refused=refused)
            if refusal.code in ("stale_expected_seq", "transition_not_allowed"):
                return self.hand_over()  # something came: a message, a reclaim
            return None
        files.remember(self.session, answer)
        return None

    def hand_over(self) -> dict | None:
        """Give the agent what is waiting for it (a reclaim's fencing, messages not yet
        handed over), then acknowledge the messages with the seq seen: a message that
        lands meanwhile stays pending. None when there is nothing to say."""
        known = self.known()
        was_blocked = known.get("status") == "blocked" or known.get("awaiting_answer")
        view = self.view()
        if view is None:
            return None
        files.remember(self.session, view)
        if view["status"] == "closed":
            told = fenced(view) if not self.record.closed else None
            if told is None and not self.record.closed:
                told = self.closed_by_another(view)
            if told is None:
                return None
            self.remember(fenced=told)
            return self.say(told, deny=True)
        paused = budget_spent(view)
        if paused is not None and not self.waits_for_a_person():
            return self.pause(view, paused)
        if was_blocked and view["status"] == "active":
            # Unblocked, and not by these hooks (theirs is known at once), while blocked
            # or awaiting an answer (a status `ct` learnt since does not hide it): a
            # person's answer, which the agent receives once.
            answer = self.answer_given(view)
            if answer is not None:
                files.await_answer(self.open_session, False)
                return self.say(answer, deny=self.payload["hook_event_name"] == "PreToolUse")
        handed = self.record.handed_seq
        fresh = [m for m in view.get("messages", []) if m["seq"] > handed]
        if not fresh:
            return None
        self.remember(handed_seq=max(m["seq"] for m in fresh), last_heartbeat=time.time())
        # No note: the card keeps saying what the agent does, not that it read a message.
        ack = self.stamped({"type": "session_progress", "expected_seq": view["seq"]})
        try:
            acked = self.tower.request(
                "POST", f"/sessions/{self.session}/events", body=ack, timeout=self.left()
            )
            files.remember(self.open_session, acked)
        except (Unreachable, Refused):
            pass  # a message landed meanwhile (or the tower went): it stays pending
        return self.say(messages_text(fresh), deny=True)

    def closed_by_another(self, view: dict) -> str:
        """What an agent is told when someone closed its session (a person's Close): who,
        and their note, read off the close itself."""
        who, note = "someone", view.get("next_action")  # without the name, if need be
        close = self.latest(view, "session_close")
        if close is not None:
            who, note = close["actor"], close.get("note")
        return (
            f"STOP. Control Tower: your work session {view['id']} was closed by {who}"
            + (f": {note}" if note else "")
            + ". Do not change anything more for it; tell the person and end here."
        )

    def answer_given(self, view: dict) -> str | None:
        """The latest unblock's note and who wrote it, as the agent is told it: "Control
        Tower: alice answered: use postgres"; None when none is found."""
        unblock = self.latest(view, "session_unblock")
        if unblock is None:
            return None
        note = unblock.get("note") or "go on"
        return f"Control Tower: {unblock['actor']} answered: {note}"

    def latest(self, view: dict, kind: str) -> dict | None:
        """The session's latest event of `kind` among its last few, or None (the tower
        away, or none there)."""
        try:
            page = self.tower.request(
                "GET",
                f"/sessions/{self.session}/events",
                query={"after": max(0, view["seq"] - 5)},
                timeout=self.left(),
            )
        except (Unreachable, Refused):
            return None
        found = [event for event in page.get("items", []) if event["type"] == kind]
        return found[-1] if found else None

    def waits_for_a_person(self) -> bool:
        """Whether the tool call is the agent's own wait for a person (`ct wait`, `ct
        show`, run alone in a shell), which a budget's pause lets through: waiting costs
        nothing, and it is how the agent learns it may go on."""
        given = self.payload.get("tool_input") or {}
        command = given.get("command") if isinstance(given, dict) else None
        if self.payload.get("tool_name") != "Bash" or not isinstance(command, str):
            return False
        words = command.strip()
        plain = not any(mark in words for mark in (";", "&", "|", "`", "$(", ">", "<", "\n"))
        return plain and any(words == c or words.startswith(c + " ") for c in _WAITING_COMMANDS)

    def pause(self, view: dict, reason: str) -> dict:
        """Refuse the tool call of an agent whose budget is spent, and block its session
        with why (once per wait: a person raises the budget and unblocks it)."""
        if view["status"] != "blocked" or self.record.paused_for != reason:
            self.remember(paused_for=reason)
            self.append({"type": "session_block", "reason": reason})
            files.await_answer(self.open_session, True)
        self.note_refused(reason)
        return self.say(
            f"STOP. Control Tower: {reason}. Do not go on with this work: tell the person, "
            "then stop and wait until they raise the budget and unblock this session.",
            deny=True,
        )

    def check_space(self) -> dict | None:
        """Before a write: who else holds the paths it writes (from a copy of the repo's
        reservations at most 15 s old). With `CT_RESERVATIONS=deny` the write is refused
        with that sentence; by default (`warn`) it runs and the agent is told."""
        written = space.written_paths(self.payload, self.checkout)
        if not written:
            return None
        # Every path a write names is in its one checkout's repository: one copy serves all.
        items = space.reservations(self.tower, written[0][0], self.left()) or []
        for _, path in written:
            others = space.holders(items, path, self.session, self.deadline)
            if not others:
                continue  # none, or not found out in time: the write goes through
            said = space.held_sentence(path, others)
            if environment.denies_reserved_writes():
                self.note_refused(space.holders_phrase(others))
                return self.say(f"{said} Leave this file to them, or message them.", deny=True)
            return self.say(f"{said} Mind their work: message them before changing it much.")
        return None

    def tool_call(self) -> str | None:
        """The tool call this hook is about, as a card says it (`Bash: make`, `Edit
        src/a.py`), or None when the input names none."""
        payload = self.payload
        tool, cwd = str(payload.get("tool_name") or ""), str(payload.get("cwd") or "")
        return doing(tool, payload.get("tool_input"), cwd)

    def note_refused(self, why: str) -> None:
        """Keep the tool call just refused, and why, for the next heartbeat's note: the
        timeline shows what the agent was kept from doing."""
        tool = self.tool_call() or "a tool call"
        self.remember(refused=clean(f"refused {tool}: {why}", NOTE_MAX, "line"))

    def note_written(self) -> None:
        """Keep the paths a write tool wrote, for the next heartbeat's `paths`."""
        paths = [path for _, path in space.written_paths(self.payload, self.checkout)]
        if paths:
            written = [p for p in self.record.written if p not in paths]
            self.remember(written=[*written, *paths][-space.PATHS_MAX :])

    def say(self, text: str, deny: bool = False) -> dict:
        """The hook's output passing `text` to the agent (refusing its tool call with it,
        when `deny` and the event can), in the agent's own format."""
        return self.agent.say(self.payload, text, deny)


def cleaned(body: dict) -> dict:
    """`body` with its texts as the tower takes them (`ct.text.clean`): a person's
    answer is never set aside for an emoji, an ANSI escape or a bidi override. A note
    with nothing left is left out; a reason or title, replaced by a plain one."""
    body = {name: value for name, value in body.items() if value is not None}
    for name, limit, kind, instead in (
        ("title", TITLE_MAX, "line", "session"),
        ("reason", REASON_MAX, "text", "waiting for a person"),
        ("note", NOTE_MAX, "text", None),
    ):
        if isinstance(body.get(name), str):
            body[name] = clean(body[name], limit, kind) or instead
            if body[name] is None:
                del body[name]
    return body


def first_session_id(prefix: str, agent_session: str) -> str:
    """The tower session an agent session's start names (its first generation)."""
    return f"{prefix}-{_safe_id(agent_session)}"[:60]


def run(agent: Agent, stdin: io.TextIOBase, stdout: io.TextIOBase) -> int:
    """Run one hook call of `agent`; always 0, so that nothing here ever stops it."""
    started = time.monotonic()
    try:
        with hard_stop(started + HARD_STOP_SECONDS):
            run, said = handle(agent, json.load(stdin), started + BUDGET_SECONDS)
        if said:
            stdout.write(json.dumps(said))
        if run is not None and run.spool.pending():
            # The agent may never run again here: a flusher of its own sends the rest.
            from ct import flusher

            flusher.start()
    except Overran:
        log(f"the hook ran past its {HARD_STOP_SECONDS} s and let the agent go on")
    except NotSignedIn as error:
        log(str(error))
    except Exception:  # a hook must never break the agent: note it and let it go on
        import traceback

        log(traceback.format_exc())
    return 0


def handle(agent: Agent, payload: dict, soft_deadline: float) -> tuple[Hook | None, dict | None]:
    """The hook call `payload` asks for, and what it says to the agent."""
    if not isinstance(payload, dict):
        log(f"{agent.name}: the hook input is not a JSON object; the agent goes on")
        return None, None
    payload = agent.translate(payload)
    event = payload.get("hook_event_name")
    handler = agent.handlers.get(event)
    if handler is None or not payload.get("session_id"):
        why = "no session_id" if handler else f"an event it does not take ({event!r})"
        log(f"{agent.name}: the hook input has {why}; the agent goes on")
        return None, None
    run = Hook(payload, Tower.configured(), soft_deadline, agent)
    if run.session is None and event != agent.start_event:
        return None, None  # a session this hook never started: nothing to report
    return run, handler(run)


def title_of(folder: Path) -> str:
    """The git branch checked out in `folder`, else the folder's name."""
    found = gitfacts.facts(folder)
    if found is not None and found.branch:
        return found.branch[:TITLE_MAX]
    return (folder.resolve().name or "session")[:TITLE_MAX]


def _safe_id(text: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "-_." else "-" for c in text)
    return cleaned.lstrip(".-") or "session"
