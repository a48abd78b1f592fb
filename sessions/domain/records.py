"""The event record: one stored event as every layer passes it around (a named tuple,
so rows read from the store need no model instances)."""

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from sessions.domain.vocabulary import EVENT_FIELDS


class EventRecord(NamedTuple):
    session: str
    seq: int
    type: str
    timestamp: datetime
    actor: str
    agent: str | None = None  # v5: the agent program that appended it for its actor
    title: str | None = None
    reason: str | None = None
    note: str | None = None
    plan: str | None = None  # a session's start: the plan and node it works on
    node: str | None = None
    outcome: str | None = None  # a session's close
    lease: int | None = None  # a plan event's liveness settings
    max_attempts: int | None = None
    done_when: str | None = None  # a plan event's: what makes a node done (v4)
    budget_usd: int | float | None = None  # a plan event's budget (0: removed)
    repo: str | None = None  # a session_work's report of where the work lands
    branch: str | None = None
    commit: str | None = None
    pr: int | None = None
    pr_url: str | None = None
    pr_state: str | None = None
    check: str | None = None
    check_state: str | None = None
    model: str | None = None  # a session_usage's token totals so far, for one model
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    nodes: list | None = None  # a plan event's graph changes
    needs: list | None = None
    drop_needs: list | None = None
    retire: list | None = None
    budgets: dict | None = None  # an amend's per-node budgets
    paths: dict | list | None = None  # an amend's per-node patterns; a heartbeat's paths
    briefs: dict | None = None  # an amend's per-node briefs (v5)


assert EventRecord._fields[5:] == EVENT_FIELDS, "EventRecord holds every event field"

Events = Sequence[EventRecord]  # a stream's events, oldest first
