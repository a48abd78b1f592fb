"""What `ct` prints for a person: one line per thing, the essentials first."""

from decimal import ROUND_HALF_UP, Decimal

from ct.text import clean

# How long a heartbeat's note of what the agent is doing may be.
DOING_MAX = 120


def session_line(view: dict) -> str:
    """One line of a session's view: id, status, title, then what a person needs."""
    parts = [view["id"], view.get("status") or "?", view.get("title") or ""]
    if view.get("stale"):
        parts.append("stale")
    if view.get("attention"):
        parts.append(f"needs attention: {view['attention']['kind']}")
    if view.get("outcome"):
        parts.append(f"outcome {view['outcome']}")
    if view.get("next_action"):
        parts.append(f"next: {view['next_action']}")
    if view.get("message_count"):
        parts.append(f"{view['message_count']} message(s) waiting")
    return " · ".join(part for part in parts if part)


def event_line(item: dict) -> str:
    text = item.get("reason") or item.get("note") or item.get("title") or ""
    return f"{item.get('position', '')}\t{item['timestamp']}\t{item['session']}#{item['seq']}" + (
        f"\t{item['type']}\t{item['actor']}\t{text}"
    )


def work_words(work: dict) -> str:
    """Where a session's work landed, in words: "branch fix-login of acme/shop at
    3f2c0a1b2c3d, PR #94 (open)"."""
    place = [f"branch {work['branch']}"] if work.get("branch") else []
    if work.get("repo"):
        place.append(f"of {work['repo']}" if place else work["repo"])
    if work.get("commit"):
        place.append(f"at {work['commit'][:12]}")
    words = [" ".join(place)] if place else []
    pr = work.get("pr")
    if pr:
        words.append(f"PR #{pr['number']}" + (f" ({pr['state']})" if pr.get("state") else ""))
    return ", ".join(words) or "reported"


def attempt_lines(last: dict | None) -> list[str]:
    if not last:
        return ["first attempt: no one has worked this node before"]
    lines = [f"last attempt: session {last['session']} ended {last['outcome']}"]
    if last.get("note"):
        lines.append(f"  its last word: {last['note']}")
    if last.get("progress"):
        lines.append(f"  it was doing: {last['progress']}")
    if last.get("work"):
        lines.append(f"  its work: {work_words(last['work'])}")
    for message in last.get("messages") or []:
        lines.append(f"  message from {message['actor']} it never read: {message['note']}")
    return lines


# What a heartbeat says the agent is doing: the tool, and the input naming its target.
_TARGETS = ("file_path", "notebook_path", "path", "url", "pattern", "query", "description")


def doing(tool: str, given: object, cwd: str) -> str | None:
    """The latest tool and its target, as a person reads it: `Edit src/cart.py`,
    `Bash: pytest -q` (at most `DOING_MAX` characters); None without a tool."""
    if not tool:
        return None
    given = given if isinstance(given, dict) else {}
    if tool == "Bash" and isinstance(given.get("command"), str):
        lines = given["command"].strip().splitlines() or [""]
        return clean(f"Bash: {lines[0]}", DOING_MAX, "line")
    for name in _TARGETS:
        target = given.get(name)
        if isinstance(target, str) and target.strip():
            if name in ("file_path", "notebook_path", "path") and cwd:
                target = _relative(target, cwd)
            return clean(f"{tool} {target}", DOING_MAX, "line")
    return clean(tool, DOING_MAX, "line")


def _relative(path: str, cwd: str) -> str:
    folder = cwd.rstrip("/") + "/"
    return path[len(folder) :] if path.startswith(folder) else path


# What the hooks tell the agent ------------------------------------------------------


def fenced(view: dict) -> str | None:
    """What an agent whose session someone else closed is told at every tool call from
    then on: reclaimed (it lapsed, and another took the node over), or merged (its pull
    request is in); None for any other close."""
    if view.get("outcome") == "lapsed":
        return (
            f"STOP. Control Tower: your work session {view['id']} was closed as lapsed and "
            f"someone else has taken this work over ({view.get('next_action') or 'reclaimed'}). "
            "Do not change anything more for it; tell the person and end here."
        )
    pr = (view.get("work") or {}).get("pr") or {}
    if pr.get("state") == "merged":
        said = view.get("next_action") or f"PR #{pr.get('number')} merged"
        return (
            f"STOP. Control Tower: {said}: your work is in; stop pushing to this branch. "
            "Tell the person and end here."
        )
    return None


def budget_spent(view: dict) -> str | None:
    """`budget spent: $X of $Y (node K)` when the budget binding the session's node is
    spent (dollars rounded half up to cents, as the tower writes them), else None."""
    budget = view.get("budget") or {}
    if not budget.get("over"):
        return None
    owner = view.get("node") if budget.get("scope") == "node" else view.get("plan")
    spent, limit = dollars(budget.get("spent_usd")), dollars(budget.get("limit_usd"))
    return f"budget spent: {spent} of {limit} ({budget.get('scope')} {owner})"


def dollars(amount: object) -> str:
    cents = Decimal(str(amount)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return f"${cents:,}"


def messages_text(messages: list[dict]) -> str:
    lines = [f"- from {m['actor']}: {m['note']}" for m in messages]
    return (
        "Control Tower: a person sent you a message before this tool call. Read it and "
        "take it into account; then try the tool call again if it still fits.\n" + "\n".join(lines)
    )


def brief_lines(brief: str | None) -> list[str]:
    """A claimed node's brief (what to do), indented under its heading; none without."""
    if not brief:
        return []
    return ["brief:", *(f"  {line}" for line in brief.splitlines())]
