"""`ct hook claude-code`: Claude Code's hooks report its session to the tower by
themselves (DESIGN.md, "The agent's side"), and hand a person's messages, or the news that
someone else took the work over, to the agent before its next tool call.

The hook's input and output are Claude Code's own, as `@anthropic-ai/claude-agent-sdk`'s
published types define them (`BaseHookInput`: session_id, transcript_path, cwd,
hook_event_name, and each event's fields; `SyncHookJSONOutput` with its
`hookSpecificOutput`). A hook never breaks or stalls the agent: it answers within
`BUDGET_SECONDS`, always exits 0, and spools what the tower could not take.

Decisions DESIGN.md leaves open, taken here:
- A Notification blocks the session (the agent waits for a person: a permission prompt,
  an idle prompt); if the agent then runs a tool without a new prompt (the person
  granted the permission), PostToolUse unblocks it ("resumed") instead of a heartbeat.
- Stop and Notification do not block a session the hook already knows is blocked: one
  open block per wait, not one per reminder.
- Messages go to the agent by denying its next tool call with them as the reason (the
  documented blocking output); the agent reads them and tries again. The hook remembers
  the last message it handed over, so none is handed twice.
- A session closed as lapsed (reclaimed) gets every further tool call denied, with who
  took it over.
- A session whose node's budget is spent is blocked with why (once per wait) and each of
  its tool calls denied until a person raises the budget (and unblocks it)."""

import functools
import io
import json
import os
import time
from pathlib import Path

from ct import files, gitfacts, space, spooling, transcript
from ct.client import NotSignedIn, Refused, Tower, Unreachable
from ct.deadline import Overran, hard_stop
from ct.hooklog import log
from ct.lines import attempt_lines, budget_spent, doing, fenced, messages_text
from ct.text import clean

# Claude Code waits for a hook; ours answer well within 2 s, the interpreter's start
# included, whatever the tower does: the network and the reservation check stop at
# BUDGET_SECONDS, and anything still running at HARD_STOP_SECONDS is cut short.
BUDGET_SECONDS, HARD_STOP_SECONDS = 1.5, 1.8
HEARTBEAT_EVERY_SECONDS = 60
WAITING_FOR_PROMPT = "waiting for the next prompt"
TITLE_MAX, REASON_MAX, NOTE_MAX, PROMPT_NOTE_MAX, MODEL_MAX = 200, 2000, 2000, 200, 100
# The tower's token fields, in the order of `transcript.COUNTS`.
USAGE_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
STATUS_AFTER = {"session_block": "blocked", "session_unblock": "active", "session_close": "closed"}
# Notifications that are not a wait on a person.
_NOT_WAITING = {"auth_success"}
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "Stop",
    "SessionEnd",
)


class Hook:
    """One hook call: Claude Code's input, the tower, and what this Claude Code session's
    hooks remember (which tower session is its, when it last sent a heartbeat, the last
    message handed over)."""

    def __init__(self, payload: dict, tower: Tower, deadline: float) -> None:
        self.payload, self.tower, self.deadline = payload, tower, deadline
        self.spool = files.Spool()
        claude_session = str(payload["session_id"])
        self.record_path = files.state_file("claude-code", claude_session)
        self.record = files.read_json(self.record_path)
        self.claude_session = claude_session

    @property
    def session(self) -> str | None:
        """The tower session this Claude Code session's hooks report to. With no state
        folder to remember it in, the one its start names (generation 0)."""
        found = self.record.get("session")
        if found is None and not files.writable(files.state_home()):
            return first_session_id(self.claude_session)
        return found

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    @functools.cached_property
    def checkout(self) -> gitfacts.Checkout | None:
        """The checkout the tool ran in, read once a hook (its `.git` files)."""
        return gitfacts.checkout(Path(self.payload.get("cwd") or "."))

    def remember(self, **changes) -> None:
        """Keep `changes` in this Claude Code session's record (in memory at least: with
        the state folder unwritable, the hook goes on with what it has)."""

        def change(known: dict) -> None:
            known.update(changes)

        try:
            self.record = files.update_json(self.record_path, change, self.deadline)
        except OSError:
            self.record = {**self.record, **changes}

    def begin(self, session: str, generation: int) -> None:
        """This Claude Code session is now `session`'s (its `generation`-th)."""
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
        return files.read_json(files.stream_state_path(self.session))

    def append(self, body: dict) -> bool:
        """Send an event to this session, through the spool (its status as the event
        leaves it is known at once, so that the hooks after it act on it)."""
        body = cleaned(body)
        if body["type"] in STATUS_AFTER:
            files.expect_status(self.session, STATUS_AFTER[body["type"]])
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
        moved since the last one this Claude Code session's hooks sent (read from `.git`:
        no git process, so a tool call costs a few small reads)."""
        found = self.checkout and self.checkout.facts
        if not found or found.commit is None:
            return  # no commit yet: nothing has landed (the title says the branch)
        if self.record.get("reported_work") == list(found):
            return
        self.remember(reported_work=list(found))
        self.append({"type": "session_work", **found.report()})

    def report_usage(self) -> None:
        """A `session_usage` for each model whose totals moved since the last this Claude
        Code session's hooks sent, read on from where they stopped in its transcript."""
        path = self.payload.get("transcript_path")
        if not isinstance(path, str) or not path:
            return
        reading = transcript.read(path, self.record.get("transcript"))
        sent = self.record.get("reported_usage") or {}
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
        if now - self.record.get("last_heartbeat", 0) < HEARTBEAT_EVERY_SECONDS:
            return False

        def take(known: dict) -> None:
            if now - known.get("last_heartbeat", 0) >= HEARTBEAT_EVERY_SECONDS:
                known["last_heartbeat"] = now

        try:
            self.record = files.update_json(self.record_path, take, self.deadline)
        except OSError:
            return True  # no state folder to throttle by: every call is due
        return self.record.get("last_heartbeat") == now

    def heartbeat(self, note: str | None = None, due: bool = False) -> dict | None:
        """A heartbeat saying `note` (what the agent is doing), at most one a minute
        unless `due` (a new prompt), never over messages not yet handed over: it expects
        the seq last seen, and on a conflict hands over what came (where the event can
        pass text) instead."""
        if due:
            self.remember(last_heartbeat=time.time())
        elif not self.heartbeat_due():
            return None  # throttled: no request at all
        self.report_usage()  # the usage goes with the heartbeat
        seq = self.known().get("seq")
        body = cleaned({"type": "session_progress", "note": note})
        written = self.record.get("written")
        if written:  # the paths written since the last heartbeat go with it
            body["paths"] = written
            self.remember(written=[])
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
            if written:  # not sent: they go with the next one
                self.remember(written=written)
            if refusal.code in ("stale_expected_seq", "transition_not_allowed"):
                return self.hand_over()  # something came: a message, a reclaim
            return None
        files.remember(self.session, answer)
        return None

    def hand_over(self) -> dict | None:
        """Give the agent what is waiting for it (a reclaim's fencing, messages not yet
        handed over), then acknowledge the messages with the seq seen: a message that
        lands meanwhile stays pending. None when there is nothing to say."""
        view = self.view()
        if view is None:
            return None
        files.remember(self.session, view)
        if view["status"] == "closed":
            told = fenced(view)
            if told is None:
                return None
            self.remember(fenced=told)
            return self.say(told, deny=True)
        paused = budget_spent(view)
        if paused is not None:
            return self.pause(view, paused)
        handed = self.record.get("handed_seq", 0)
        fresh = [m for m in view.get("messages", []) if m["seq"] > handed]
        if not fresh:
            return None
        self.remember(handed_seq=max(m["seq"] for m in fresh), last_heartbeat=time.time())
        # No note: the card keeps saying what the agent does, not that it read a message.
        ack = {"type": "session_progress", "expected_seq": view["seq"]}
        try:
            answer = self.tower.request(
                "POST", f"/sessions/{self.session}/events", body=ack, timeout=self.left()
            )
            files.remember(self.session, answer)
        except (Unreachable, Refused):
            pass  # a message landed meanwhile (or the tower went): it stays pending
        return self.say(messages_text(fresh), deny=True)

    def pause(self, view: dict, reason: str) -> dict:
        """Refuse the tool call of an agent whose budget is spent, and block its session
        with why (once per wait: a person raises the budget and unblocks it)."""
        if view["status"] != "blocked" or self.record.get("paused_for") != reason:
            self.remember(paused_for=reason)
            self.append({"type": "session_block", "reason": reason})
        return self.say(
            f"STOP. Control Tower: {reason}. Do not go on with this work: tell the person, "
            "then stop and wait until they raise the budget and unblock this session.",
            deny=True,
        )

    def check_space(self) -> dict | None:
        """Before a write: who else holds the path (from a copy of the repo's
        reservations at most 15 s old). With `CT_RESERVATIONS=deny` the write is refused
        with that sentence; by default (`warn`) it runs and the agent is told."""
        target = space.written_path(self.payload, self.checkout)
        if target is None:
            return None
        repo, path = target
        items = space.reservations(self.tower, repo, self.left())
        others = space.holders(items or [], path, self.session, self.deadline)
        if not others:
            return None  # none, or not found out in time: the write goes through
        said = space.held_sentence(path, others)
        if os.environ.get("CT_RESERVATIONS", "warn") == "deny":
            return self.say(f"{said} Leave this file to them, or message them.", deny=True)
        return self.say(f"{said} Mind their work: message them before changing it much.")

    def note_written(self) -> None:
        """Keep the path a write tool wrote, for the next heartbeat's `paths`."""
        target = space.written_path(self.payload, self.checkout)
        if target is not None:
            written = [p for p in self.record.get("written", []) if p != target[1]]
            self.remember(written=[*written, target[1]][-space.PATHS_MAX :])

    def say(self, text: str, deny: bool = False) -> dict:
        """The hook's output passing `text` to the agent, as this event can."""
        event = self.payload["hook_event_name"]
        if event == "PreToolUse" and deny:
            specific = {"permissionDecision": "deny", "permissionDecisionReason": text}
        else:
            specific = {"additionalContext": text}
        return {"hookSpecificOutput": {"hookEventName": event, **specific}}


def cleaned(body: dict) -> dict:
    """`body` with its texts as the tower takes them (`ct.text.clean`): a person's
    answer is never set aside for an emoji, an ANSI escape or a bidi override. A note
    with nothing left is left out; a reason or title, replaced by a plain one."""
    body = {name: value for name, value in body.items() if value is not None}
    for name, limit, kind, instead in (
        ("title", TITLE_MAX, "line", "claude-code"),
        ("reason", REASON_MAX, "text", "waiting for a person"),
        ("note", NOTE_MAX, "text", None),
    ):
        if isinstance(body.get(name), str):
            body[name] = clean(body[name], limit, kind) or instead
            if body[name] is None:
                del body[name]
    return body


def first_session_id(claude_session: str) -> str:
    """The tower session a Claude Code session's start names (its first generation)."""
    return f"cc-{_safe_id(claude_session)}"[:60]


# The hook events ---------------------------------------------------------------------


def on_session_start(hook: Hook) -> dict | None:
    if hook.record.get("session") and not hook.record.get("closed"):
        return None  # resumed, or compacted: its session goes on
    claim = os.environ.get("CT_CLAIM")
    generation = hook.record.get("generation", -1) + 1
    if claim:
        return claim_node(hook, claim, generation)
    session = first_session_id(hook.claude_session) + (f"-{generation}" if generation else "")
    body = cleaned({"id": session, "title": title_of(Path(hook.payload.get("cwd") or "."))})
    if os.environ.get("CT_PLAN") and os.environ.get("CT_NODE"):
        body.update(plan=os.environ["CT_PLAN"], node=os.environ["CT_NODE"])
    hook.begin(session, generation)
    request = spooling.entry("POST", "/sessions", body, session)
    spooling.send(hook.tower, request, hook.spool, hook.deadline)
    hook.report_work()
    return None


def claim_node(hook: Hook, plan: str, generation: int) -> dict | None:
    """`CT_CLAIM`: claim the plan's next node and tell the agent what it got (the
    claim needs its answer, so it is not spooled: with the tower away, no node)."""
    key = f"cc-claim-{hook.claude_session}-{generation}"
    try:
        claimed = hook.tower.request(
            "POST", f"/plans/{plan}/claim", body={}, key=key, timeout=hook.left()
        )
    except (Unreachable, Refused) as error:
        log(f"claim on {plan}: {error}")
        return None
    files.remember(claimed["id"], claimed)
    hook.begin(claimed["id"], generation)
    hook.report_work()
    text = "\n".join(
        [
            f"Control Tower: you work on node {claimed['node']} of plan {plan}: "
            f"{claimed.get('title') or ''} (session {claimed['id']}).",
            *attempt_lines(claimed.get("last_attempt")),
        ]
    )
    return hook.say(text)


def on_user_prompt(hook: Hook) -> dict | None:
    """A person answered a blocked session (the prompt's first line is the answer), or
    gave a new prompt: its first line is what the agent now does."""
    shared = os.environ.get("CT_SHARE_PROMPTS") != "0"
    prompt = str(hook.payload.get("prompt") or "")
    first_line = clean((prompt.strip().splitlines() or [""])[0], PROMPT_NOTE_MAX, "line")
    if hook.known().get("status") == "blocked":
        note = (first_line if shared else None) or "answered"
        hook.append({"type": "session_unblock", "note": note})
        return None
    return hook.heartbeat((first_line if shared else None) or "new prompt", due=True)


def on_pre_tool_use(hook: Hook) -> dict | None:
    if hook.record.get("fenced"):  # reclaimed: every tool call from now on is told so
        return hook.say(hook.record["fenced"], deny=True)
    return hook.hand_over() or hook.check_space()


def on_post_tool_use(hook: Hook) -> dict | None:
    if hook.known().get("status") == "blocked" and hook.record.get("blocked_by_hook"):
        hook.remember(blocked_by_hook=False)
        hook.append({"type": "session_unblock", "note": "resumed"})
        return None
    hook.report_work()  # the head may have moved (a commit, a checkout)
    hook.note_written()
    payload = hook.payload
    tool, cwd = str(payload.get("tool_name") or ""), str(payload.get("cwd") or "")
    note = doing(tool, payload.get("tool_input"), cwd)
    return hook.heartbeat(note)


def on_notification(hook: Hook) -> dict | None:
    if hook.payload.get("notification_type") in _NOT_WAITING:
        return None
    reason = str(hook.payload.get("message") or "waiting for a person")
    return block(hook, reason)


def on_stop(hook: Hook) -> dict | None:
    hook.report_usage()
    return block(hook, WAITING_FOR_PROMPT)


def block(hook: Hook, reason: str) -> None:
    if hook.known().get("status") == "blocked":
        return None
    hook.remember(blocked_by_hook=True)
    hook.append({"type": "session_block", "reason": reason[:REASON_MAX]})
    return None


# Why Claude Code ended a session (SessionEnd's `reason`), in a person's words.
ENDED = {
    "clear": "the conversation was cleared (/clear)",
    "logout": "the person logged out of Claude Code",
    "prompt_input_exit": "the person left Claude Code",
    "bypass_permissions_disabled": "Claude Code turned off bypassing permissions",
    "other": "Claude Code ended the session",
}


def on_session_end(hook: Hook) -> dict | None:
    reason = str(hook.payload.get("reason") or "other")
    hook.report_usage()  # before the close: its last figures
    hook.remember(closed=True)
    note = f"ended: {ENDED.get(reason, f'Claude Code ended the session ({reason})')}"
    hook.append({"type": "session_close", "outcome": "done", "note": note})
    return None


HANDLERS = {
    "SessionStart": on_session_start,
    "UserPromptSubmit": on_user_prompt,
    "PreToolUse": on_pre_tool_use,
    "PostToolUse": on_post_tool_use,
    "Notification": on_notification,
    "Stop": on_stop,
    "SessionEnd": on_session_end,
}


def hook(stdin: io.TextIOBase, stdout: io.TextIOBase) -> int:
    """Run one hook call; always 0, so that nothing here ever stops the agent."""
    started = time.monotonic()
    try:
        with hard_stop(started + HARD_STOP_SECONDS):
            run, said = handle(json.load(stdin), started + BUDGET_SECONDS)
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


def handle(payload: dict, soft_deadline: float) -> tuple[Hook | None, dict | None]:
    """The hook call `payload` asks for, and what it says to the agent."""
    handler = HANDLERS.get(payload.get("hook_event_name"))
    if handler is None or not payload.get("session_id"):
        return None, None
    run = Hook(payload, Tower.configured(), soft_deadline)
    if run.session is None and handler is not on_session_start:
        return None, None  # a session this hook never started: nothing to report
    return run, handler(run)


def title_of(folder: Path) -> str:
    """The git branch checked out in `folder`, else the folder's name."""
    found = gitfacts.facts(folder)
    if found is not None and found.branch:
        return found.branch[:TITLE_MAX]
    return (folder.resolve().name or "claude-code")[:TITLE_MAX]


def _safe_id(text: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "-_." else "-" for c in text)
    return cleaned.lstrip(".-") or "session"
