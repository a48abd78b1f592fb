"""What an agent session's hooks remember between calls, one record a session in the state
folder (`<agent>/<agent session>.json`): typed here, so that every field the hooks keep has
one name, one type and one default, and a misspelt one fails at once."""

from dataclasses import dataclass, field, fields, replace
from typing import Any


@dataclass(frozen=True)
class HookRecord:
    session: str | None = None  # the tower session the hooks report to
    generation: int = -1  # how many tower sessions this agent session has had, less one
    closed: bool = False  # its session is closed by these hooks (its end)
    fenced: str | None = None  # what every tool call is told once someone took the work
    handed_seq: int = 0  # the latest message handed to the agent
    last_heartbeat: float = 0.0  # when the latest heartbeat went (epoch seconds)
    reported_work: list | None = None  # the (repo, branch, commit) last reported
    transcript: dict | None = None  # where the agent's own record was read up to
    reported_usage: dict = field(default_factory=dict)  # tokens sent, by model
    written: list[str] = field(default_factory=list)  # paths written since the last report
    refused: str | None = None  # the tool call refused since the last heartbeat, and why
    paused_for: str | None = None  # the budget's reason it was paused for
    blocked_by_hook: bool = False  # its session blocked by these hooks (a notification)
    agent_label: str | None = None  # which program (and version) its events say wrote them

    @classmethod
    def of(cls, stored: dict) -> "HookRecord":
        """The record a state file holds (what an older `ct` kept beside it ignored)."""
        names = {f.name for f in fields(cls)}
        return cls(**{name: value for name, value in stored.items() if name in names})

    def changed(self, **changes: Any) -> "HookRecord":
        """This record with `changes` (a name it has not is a TypeError)."""
        return replace(self, **changes)
