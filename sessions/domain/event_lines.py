"""What a timeline row says of an event that carries no note: where the work landed
(`session_work`), what the agent spent (`session_usage`), which paths a heartbeat wrote.
A person reads "PR #94 opened" or "opus-5-5: 40 in, 20 out", not an empty cell."""

from sessions.domain import vocabulary
from sessions.domain.records import EventRecord

_PR_STATES = {"open": "opened", "merged": "merged", "closed": "closed unmerged"}
_CHECK_MARKS = {"success": "✓", "failure": "✗", "pending": "…"}
SHORT_COMMIT = 12  # characters of a commit shown: enough to find it, short enough to read
PATHS_SHOWN = 5


def event_line(event: EventRecord) -> str:
    """The event's own facts in a line, or "" for an event whose note says it all."""
    if event.type == vocabulary.WORK:
        return work_line(event)
    if event.type == vocabulary.USAGE:
        return usage_line(event)
    if event.type == vocabulary.PROGRESS and isinstance(event.paths, list) and event.paths:
        shown = ", ".join(event.paths[:PATHS_SHOWN])
        more = len(event.paths) - PATHS_SHOWN
        return f"wrote {shown}" + (f" and {more} more" if more > 0 else "")
    return ""


def work_line(event: EventRecord) -> str:
    parts = []
    if event.pr is not None:
        parts.append(f"PR #{event.pr} {_PR_STATES.get(event.pr_state or '', 'reported')}".strip())
    if event.check is not None:
        mark = _CHECK_MARKS.get(event.check_state or "", event.check_state or "")
        parts.append(f"checks: {event.check} {mark} at {_short(event.commit)}")
    elif event.commit is not None:
        parts.append(f"at {_short(event.commit)}")
    if event.branch is not None:
        parts.append(f"on {event.branch}" + (f" of {event.repo}" if event.repo else ""))
    elif event.repo is not None:
        parts.append(f"in {event.repo}")
    return ", ".join(parts)


def usage_line(event: EventRecord) -> str:
    counts = [f"{event.input_tokens or 0:,} in", f"{event.output_tokens or 0:,} out"]
    if event.cache_read_tokens:
        counts.append(f"{event.cache_read_tokens:,} read from cache")
    if event.cache_write_tokens:
        counts.append(f"{event.cache_write_tokens:,} written to cache")
    return f"{event.model}: {', '.join(counts)} (so far)"


def _short(commit: str | None) -> str:
    return f"{commit[:SHORT_COMMIT]}…" if commit else "?"
