"""`ct hook claude-code`: Claude Code's hooks report its session to the tower by
themselves (docs/rules.md, "The agent's side"), and hand a person's messages, or the news that
someone else took the work over, to the agent before its next tool call.

The hook's input and output are Claude Code's own, as `@anthropic-ai/claude-agent-sdk`'s
published types define them (`BaseHookInput`: session_id, transcript_path, cwd,
hook_event_name, and each event's fields; `SyncHookJSONOutput` with its
`hookSpecificOutput`). What every agent's hooks share is `ct.hook_engine`; this is the
adapter of Claude Code's events and output.

Decisions docs/rules.md leaves open, taken here:
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

import io
from pathlib import Path

from ct import agent_names, environment, files, hook_engine, spooling
from ct.client import Refused, Unreachable
from ct.hook_engine import PROMPT_NOTE_MAX, REASON_MAX, Hook, cleaned, first_session_id, title_of
from ct.hooklog import log
from ct.lines import attempt_lines
from ct.text import clean

WAITING_FOR_PROMPT = "waiting for the next prompt"
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


def say(payload: dict, text: str, deny: bool = False) -> dict:
    """The hook's output passing `text` to Claude Code, as this event can."""
    event = payload["hook_event_name"]
    if event == "PreToolUse" and deny:
        specific = {"permissionDecision": "deny", "permissionDecisionReason": text}
    else:
        specific = {"additionalContext": text}
    return {"hookSpecificOutput": {"hookEventName": event, **specific}}


# The hook events ---------------------------------------------------------------------


def on_session_start(hook: Hook) -> dict | None:
    if hook.record.session and not hook.record.closed:
        return None  # resumed, or compacted: its session goes on
    claim = environment.plan_to_claim()
    generation = hook.record.generation + 1
    adopted = hook_engine.dispatched_session()
    if adopted:  # `ct dispatch` claimed it: report into it, start nothing
        hook.begin(adopted, generation)
        hook.report_work()
        return None
    if claim:
        return claim_node(hook, claim, generation)
    session = first_session_id(hook.agent.prefix, hook.agent_session)
    session += f"-{generation}" if generation else ""
    title = title_of(Path(hook.payload.get("cwd") or "."))
    body = hook.stamped(cleaned({"id": session, "title": title}))
    if (on_node := environment.plan_node()) is not None:
        body.update(plan=on_node[0], node=on_node[1])
    hook.begin(session, generation)
    request = spooling.entry("POST", "/sessions", body, session)
    spooling.send(hook.tower, request, hook.spool, hook.deadline)
    hook.report_work()
    return None


def claim_node(hook: Hook, plan: str, generation: int) -> dict | None:
    """`CT_CLAIM`: claim the plan's next node and tell the agent what it got (the
    claim needs its answer, so it is not spooled: with the tower away, no node)."""
    key = f"{hook.agent.prefix}-claim-{hook.agent_session}-{generation}"
    try:
        claimed = hook.tower.request(
            "POST", f"/plans/{plan}/claim", body=hook.stamped({}), key=key, timeout=hook.left()
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
    shared = environment.shares_prompts()
    prompt = str(hook.payload.get("prompt") or "")
    first_line = clean((prompt.strip().splitlines() or [""])[0], PROMPT_NOTE_MAX, "line")
    if hook.known().get("status") == "blocked":
        note = (first_line if shared else None) or "answered"
        hook.append({"type": "session_unblock", "note": note})
        return None
    said = hook.hand_over()  # a person's answer, or messages, given on the board meanwhile
    doing = hook.heartbeat((first_line if shared else None) or "new prompt", due=True)
    return said or doing


def on_pre_tool_use(hook: Hook) -> dict | None:
    if hook.record.fenced:  # reclaimed: every tool call from now on is told so
        return hook.say(hook.record.fenced, deny=True)
    return hook.hand_over() or hook.check_space()


def on_post_tool_use(hook: Hook) -> dict | None:
    if hook.known().get("status") == "blocked" and hook.record.blocked_by_hook:
        hook.remember(blocked_by_hook=False)
        hook.append({"type": "session_unblock", "note": "resumed"})
        return None
    hook.report_work()  # the head may have moved (a commit, a checkout)
    hook.note_written()
    return hook.heartbeat(hook.tool_call())


def on_notification(hook: Hook) -> dict | None:
    if hook.payload.get("notification_type") in _NOT_WAITING:
        return None
    block(hook, str(hook.payload.get("message") or "waiting for a person"))
    return None


def on_stop(hook: Hook) -> dict | None:
    hook.report_usage()
    if hook_engine.dispatched_session():
        return None  # headless: the turn's end is the run's, which the dispatcher judges
    block(hook, WAITING_FOR_PROMPT)
    return None


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
    if hook_engine.dispatched_session():
        return None  # the dispatcher closes it, by how the agent's process ended
    waiting = blocked_on(hook)
    if waiting is not None and waiting != WAITING_FOR_PROMPT:
        # An agent that stops while it waits on anything but its own turn's end (a
        # question to a person, a budget's pause, a permission) has not done its work.
        note = f"ended while blocked: {waiting}"
        hook.append({"type": "session_close", "outcome": "abandoned", "note": note})
        return None
    agent = hook.agent
    note = f"ended: {agent.ended.get(reason, f'{agent.title} ended the session ({reason})')}"
    hook.append({"type": "session_close", "outcome": "done", "note": note})
    return None


def blocked_on(hook: Hook) -> str | None:
    """What the session is blocked on now (its latest open block's reason), or None when
    it is not blocked: from its view (a person's block is not in `ct`'s own record), else
    from what `ct` last knew."""
    view = hook.view()
    if view is None:
        if hook.known().get("status") != "blocked":
            return None
        return hook.record.paused_for or "a person"
    if view.get("status") != "blocked":
        return None
    blockers = view.get("blockers") or []
    return str(blockers[-1].get("reason") or "a person") if blockers else "a person"


HANDLERS = {
    "SessionStart": on_session_start,
    "UserPromptSubmit": on_user_prompt,
    "PreToolUse": on_pre_tool_use,
    "PostToolUse": on_post_tool_use,
    "Notification": on_notification,
    "Stop": on_stop,
    "SessionEnd": on_session_end,
}


AGENT = hook_engine.Agent(
    "claude-code",
    "cc",
    "SessionStart",
    say,
    HANDLERS,
    ended=ENDED,
    title=agent_names.PROGRAM_NAMES["claude-code"],
)


def hook(stdin: io.TextIOBase, stdout: io.TextIOBase) -> int:
    """Run one of Claude Code's hook calls; always 0."""
    return hook_engine.run(AGENT, stdin, stdout)
