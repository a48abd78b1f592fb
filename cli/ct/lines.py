"""What `ct` prints for a person: one line per thing, the essentials first."""


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
