"""The event vocabulary (docs/rules.md, "Vocabulary"): types, their fields and limits,
statuses, transitions.

Pure Python, shared by the append function, the JSONL codec, the forms and the API, so
that every surface refuses exactly the same inputs with the same words.
"""

from datetime import timedelta
from typing import Any

from sessions.domain import paths as space
from sessions.domain.field_rules import (  # noqa: F401 (named here with the rest)
    BRANCH_MAX,
    BUDGET_MAX,
    CHECK_MAX,
    CHECK_STATES,
    COMMIT_PATTERN,
    PR_MAX,
    PR_STATES,
    PR_URL_MAX,
    REPO_MAX,
    REPO_PATTERN,
    WORK_FIELDS,
    budget_error,
    dollars,
    node_map_error,
    work_errors,
    work_value_error,
)
from sessions.domain.text_rules import (  # noqa: F401 (named here with the rest)
    ACTOR_MAX,
    SESSION_ID_MAX,
    SESSION_ID_PATTERN,
    actor_error,
    id_list_error,
    list_error,
    session_id_error,
    text_error,
    text_pattern,
)

START = "session_start"
BLOCK = "session_block"
UNBLOCK = "session_unblock"
REVIEW = "session_review"
CLOSE = "session_close"
PROGRESS = "session_progress"  # a heartbeat: the status stays
MESSAGE = "session_message"  # a person's words to the session's worker: the status stays
# Where the work lands in the code (branch, commit, pull request, checks): the status stays.
WORK = "session_work"
# What the session spent: its token totals so far for one model. The status stays.
USAGE = "session_usage"
TRANSITIONS = (START, BLOCK, UNBLOCK, REVIEW, CLOSE)  # the types that set a status
EVENT_TYPES = (*TRANSITIONS, PROGRESS, MESSAGE, WORK, USAGE)  # a session's stream
# The events that say the worker is alive and leave its status: heartbeats and usage
# reports (only a heartbeat acknowledges messages).
KEEPALIVE_TYPES = (PROGRESS, USAGE)
# A session's activity is every event but a message or a work report: a person writing to
# a silent session, or a forge reporting on its branch, does not make it look alive
# (staleness and leases count from activity).
ACTIVITY_TYPES = (*TRANSITIONS, *KEEPALIVE_TYPES)

PLAN_CREATE = "plan_create"
PLAN_AMEND = "plan_amend"
PLAN_EVENT_TYPES = (PLAN_CREATE, PLAN_AMEND)  # a build plan's stream
ALL_EVENT_TYPES = EVENT_TYPES + PLAN_EVENT_TYPES


def stream_kind(event_type: str | None) -> str | None:
    """What a stream whose event is of `event_type` is: a "plan" or a "session"."""
    if event_type is None:
        return None
    return "plan" if event_type in PLAN_EVENT_TYPES else "session"


ACTIVE = "active"
BLOCKED = "blocked"
IN_REVIEW = "in_review"
CLOSED = "closed"
STATUSES = (ACTIVE, BLOCKED, IN_REVIEW, CLOSED)

STATUS_LABELS = {ACTIVE: "Active", BLOCKED: "Blocked", IN_REVIEW: "In review", CLOSED: "Closed"}

# A plan event's graph changes, each a list (stored as JSON).
GRAPH_FIELDS = ("nodes", "needs", "drop_needs", "retire")

DONE = "done"
FAILED = "failed"
ABANDONED = "abandoned"
# Written only by a reclaim or a release of a lapsed node's session (and on import).
LAPSED = "lapsed"
# v5: its worker handed the node back unfinished (a dispatcher that stops): ready again.
RELEASED = "released"
OUTCOMES = (DONE, FAILED, ABANDONED, LAPSED, RELEASED)  # how a session ended; absent: done

# Each type's own fields, in the order JSONL writes them.
FIELDS = {
    START: ("title", "note", "plan", "node"),
    BLOCK: ("reason",),
    UNBLOCK: ("note",),
    REVIEW: ("note",),
    CLOSE: ("note", "outcome"),
    PROGRESS: ("note", "paths"),  # since v4, the paths written since the last report
    MESSAGE: ("note",),
    WORK: WORK_FIELDS,
    USAGE: ("model", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"),
    PLAN_CREATE: (
        "title",
        "note",
        "nodes",
        "lease",
        "max_attempts",
        "done_when",
        "repo",
        "budget_usd",
    ),
    PLAN_AMEND: (
        "note",
        "nodes",
        "needs",
        "drop_needs",
        "retire",
        "lease",
        "max_attempts",
        "done_when",
        "repo",
        "budget_usd",
        "budgets",
        "paths",
        "briefs",
    ),
}
# A plan's liveness settings: its lease (minutes of silence a node's active session may
# keep) and its cap on attempts (reclaims stop there), each a whole number in a range.
LIVENESS_FIELDS = ("lease", "max_attempts")
INTEGER_RANGES = {"lease": (1, 10**6), "max_attempts": (1, 100)}
# What makes a node done (v4): its session's close (the default), or its pull request's
# merge (docs/rules.md, "Where the work lands").
DONE_WHEN = ("close", "merge")
# A plan amend's `budget_usd: null` (the plan's budget removed) is stored and read as 0,
# which no budget can be; the surfaces that take an amend pass it as `REMOVED` (so that
# a 0 given is still refused).
REMOVED = object()


def removals(event_type: str, given: dict[str, object]) -> dict[str, object]:
    """The fields an event's `given` object sets to null to remove (the plan's budget, in
    an amend), as `REMOVED`."""
    if event_type == PLAN_AMEND and "budget_usd" in given and given["budget_usd"] is None:
        return {"budget_usd": REMOVED}
    return {}


# What an amend may change per node (`{key: value or null}`): budgets, path patterns and
# (v5) briefs.
NODE_MAPS = ("budgets", "paths", "briefs")
AMEND_CHANGES = (  # an amend makes one of these
    *GRAPH_FIELDS,
    *LIVENESS_FIELDS,
    "done_when",
    "repo",
    "budget_usd",
    *NODE_MAPS,
)
# v5: which agent program appended a session event for its actor, with its version
# (`codex 0.169.0`): any session event may carry it; absent, the actor acted in person.
AGENT = "agent"
AGENT_MAX = 100
USAGE_FIELDS = FIELDS[USAGE]
TOKEN_FIELDS = USAGE_FIELDS[1:]  # each a whole number of tokens, 0 to TOKENS_MAX
MODEL_MAX, TOKENS_MAX = 100, 10**15
# Every field an event may carry, in the order the event table stores them (those held
# as JSON text last).
EVENT_FIELDS = (
    AGENT,
    "title",
    "reason",
    "note",
    "plan",
    "node",
    "outcome",
    *LIVENESS_FIELDS,
    "done_when",
    "budget_usd",
    *WORK_FIELDS,
    *USAGE_FIELDS,
    *GRAPH_FIELDS,
    *NODE_MAPS,
)
# The fields an event carries as JSON (stored as JSON text): the graph's changes, an
# amend's per-node maps, a heartbeat's touched paths (`paths` in both).
JSON_FIELDS = (*GRAPH_FIELDS, *NODE_MAPS)
REQUIRED_FIELDS = {
    START: ("title",),
    BLOCK: ("reason",),
    MESSAGE: ("note",),
    USAGE: USAGE_FIELDS,
    PLAN_CREATE: ("title", "nodes"),
}
MAX_LENGTH = {"title": 200, "reason": 2000, "note": 2000}
TEXT_FIELDS = tuple(MAX_LENGTH)
ID_FIELDS = ("plan", "node")

STATUS_AFTER = {START: ACTIVE, BLOCK: BLOCKED, UNBLOCK: ACTIVE, REVIEW: IN_REVIEW, CLOSE: CLOSED}
# The events whose note is the session's next action (a block's reason always is):
# progress and messages carry notes that are not.
NOTE_BEARING = (START, BLOCK, UNBLOCK, REVIEW, CLOSE)

# `None` stands for "no events yet".
ALLOWED_FROM = {
    START: (None,),
    BLOCK: (ACTIVE, BLOCKED, IN_REVIEW),
    UNBLOCK: (BLOCKED,),
    REVIEW: (ACTIVE,),
    CLOSE: (ACTIVE, BLOCKED, IN_REVIEW),
    PROGRESS: (ACTIVE, BLOCKED, IN_REVIEW),
    MESSAGE: (ACTIVE, BLOCKED, IN_REVIEW),
    WORK: (ACTIVE, BLOCKED, IN_REVIEW, CLOSED),  # a merge often comes after the close
    USAGE: (ACTIVE, BLOCKED, IN_REVIEW, CLOSED),  # money spent after a close is still spent
}
# What may still be appended to a closed session (and may take its last place).
AFTER_CLOSE = (WORK, USAGE)

# The most events one stream may hold: past it an append is refused (close the session
# and start another). Every request's cost is bounded apart from this (pagination,
# summarised blockers), but a stream is also a file on export and a replay on import.
MAX_STREAM_EVENTS = 100_000
# An imported event may be at most this far past the importing machine's clock.
IMPORT_FUTURE_LIMIT = timedelta(days=1)

# What one request may ask for or be given, so that its cost is bounded.
MAX_BLOCKERS_SHOWN = 20  # a view lists the latest open blocks and counts them all
MAX_EVENTS_PAGE = 200  # events per page of a stream's events (API)
# Timeline rows per page of the session page: its first screen costs the same at 10 events
# or 100,000 (a page of 200 rows cost 4–5× a page of 10 to render, bench/RESULTS.md §7).
TIMELINE_PAGE = 25
MAX_FEED_PAGE = 1000  # events per page of the global feed
DEFAULT_FEED_PAGE = 100
# The text a feed page carries, at most (one event more than this is still sent whole):
# a page of 1,000 events of long notes was 22 MB.
MAX_FEED_PAGE_CHARACTERS = 1_000_000
# How long a feed request may wait for an event when none is there yet (a long poll):
# below the 30 s after which proxies and clients commonly give up on an answer.
MAX_FEED_WAIT_SECONDS = 20
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
MAX_PLAN_PAGE_SIZE = 20  # plans per page of the plan list (each up to 500 nodes)
MAX_PAGE = 10**6
MAX_MINUTES = 10**6  # per-request thresholds, in minutes
MAX_METRICS_WINDOW = timedelta(days=366)  # the longest window of flow metrics
IDEMPOTENCY_KEY_MAX = 255
MAX_PLAN_NODES = 500  # nodes one plan event may add, and live nodes one plan may hold
MAX_PLAN_KEYS = 2000  # keys a plan may ever use (retired keys are never reused)
MAX_PLAN_EDGES = 5000  # needs one plan event may add or drop
MULTILINE_FIELDS = ("reason", "note")

NODE_KEYS = ("key", "title", "needs", "paths", "budget_usd", "brief")
# A node's brief (v5): the text an agent is given to do it; tab and newline allowed.
BRIEF_MAX = 20_000


def brief_error(value: object) -> str | None:
    return text_error(value, BRIEF_MAX, "text")


def _node_error(node: object) -> str | None:
    if not isinstance(node, dict):
        return 'must be an object {"key", "title", "needs"}'
    unknown = sorted(set(node) - set(NODE_KEYS))
    if unknown:
        return (
            f"has an unknown field {unknown[0]!r} (a node has key, title, needs, paths, "
            "budget_usd and brief)"
        )
    for name in ("key", "title"):
        if name not in node:
            return f"needs a {name}"
    problem = session_id_error(node["key"])
    if problem:
        return f"key {problem}"
    problem = text_error(node["title"], MAX_LENGTH["title"])
    if problem:
        return f"title {problem}"
    needs = node.get("needs")
    if needs is not None and needs != []:
        problem = id_list_error(needs, "keys", MAX_PLAN_NODES)
        if problem:
            return f"needs {problem}"
    rules = (("paths", space.patterns_error), ("budget_usd", budget_error), ("brief", brief_error))
    for name, rule in rules:
        if node.get(name) is not None and (problem := rule(node[name])):
            return f"{name} {problem}"
    return None


def _edge_error(edge: object) -> str | None:
    if not isinstance(edge, dict) or set(edge) != {"node", "needs"}:
        return 'must be an object {"node": key, "needs": key}'
    for name in ("node", "needs"):
        problem = session_id_error(edge[name])
        if problem:
            return f"{name} {problem}"
    return None


def value_error(name: str, value: object) -> str | None:
    """Why `value` is not acceptable for the field `name` (set, not None), or None."""
    if name in TEXT_FIELDS:
        return text_error(value, MAX_LENGTH[name], "text" if name in MULTILINE_FIELDS else "line")
    if name in ID_FIELDS:
        return session_id_error(value)
    if name == "outcome":
        return None if value in OUTCOMES else f"must be one of {', '.join(OUTCOMES)}"
    if name == "nodes":
        return list_error(value, _node_error, "nodes", MAX_PLAN_NODES)
    if name in ("needs", "drop_needs"):
        return list_error(value, _edge_error, "edges", MAX_PLAN_EDGES)
    if name == "retire":
        return id_list_error(value, "keys", MAX_PLAN_NODES)
    if name in INTEGER_RANGES:
        low, high = INTEGER_RANGES[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return f"must be a whole number from {low} to {high}"
        return None
    if name == "check":
        return text_error(value, CHECK_MAX)
    if name in WORK_FIELDS:
        return work_value_error(name, value)
    if name == "model":
        return text_error(value, MODEL_MAX)
    if name == AGENT:
        return text_error(value, AGENT_MAX)
    if name in TOKEN_FIELDS:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= TOKENS_MAX:
            return f"must be a whole number of tokens from 0 to {TOKENS_MAX:,}"
        return None
    if name == "done_when":
        return None if value in DONE_WHEN else f"must be one of {', '.join(DONE_WHEN)}"
    if name == "budget_usd":
        return budget_error(value)
    if name == "budgets":
        return node_map_error(value, budget_error, "budgets", session_id_error, MAX_PLAN_NODES)
    if name == "briefs":
        return node_map_error(value, brief_error, "briefs", session_id_error, MAX_PLAN_NODES)
    raise KeyError(name)


def _paths_error(event_type: str, value: object) -> str | None:
    """`paths`: a heartbeat's touched paths, or an amend's patterns per node."""
    if event_type == PROGRESS:
        return list_error(value, space.path_error, "paths", space.PATHS_MAX)
    return node_map_error(
        value, space.patterns_error, "lists of path patterns", session_id_error, MAX_PLAN_NODES
    )


def own_fields(event_type: str) -> tuple[str, ...]:
    """The fields an event of `event_type` may carry: its type's, and for a session's
    event the agent that appended it."""
    own = FIELDS[event_type]
    return own if event_type in PLAN_EVENT_TYPES else (*own, AGENT)


def field_errors(event_type: object, fields: dict[str, object]) -> dict[str, str]:
    """Map each offending field to the reason it is refused; empty when `fields` is valid.

    A field of the type set to None counts as absent; any other field is an error,
    whatever its value. Only each value's own shape is checked here: whether a plan's
    keys and needs fit its graph is `plans`' business.
    """
    if not isinstance(event_type, str) or event_type not in FIELDS:
        return {"type": f"must be one of {', '.join(ALL_EVENT_TYPES)}"}
    allowed = own_fields(event_type)
    errors = {}
    for name in fields:
        if name not in allowed:
            others = ", ".join(allowed)
            errors[name] = f"is not a field of {event_type} (its fields: {others})"
    for name in allowed:
        value = fields.get(name)
        if value is None:
            node_title = name == "title" and fields.get("plan") is not None  # the node's
            if name in REQUIRED_FIELDS.get(event_type, ()) and not node_title:
                errors[name] = f"is required for {event_type}"
            continue
        if value is REMOVED and name == "budget_usd" and event_type == PLAN_AMEND:
            continue  # the plan's budget removed (null)
        paths = name == "paths"
        problem = _paths_error(event_type, value) if paths else value_error(name, value)
        if problem:
            errors[name] = problem
    if event_type == START and (fields.get("plan") is None) != (fields.get("node") is None):
        missing = "node" if fields.get("node") is None else "plan"
        errors.setdefault(missing, "is required with plan and node: give both or neither")
    if event_type == PLAN_AMEND and all(fields.get(name) is None for name in AMEND_CHANGES):
        errors["nodes"] = f"an amend makes at least one change: {', '.join(AMEND_CHANGES)}"
    if event_type == WORK and not errors:
        errors.update(work_errors(fields))
    return errors


def canonical_node(node: dict[str, Any]) -> dict[str, Any]:
    """A node as it is stored and written: key, title, then needs, paths, budget_usd and
    brief only when there are any."""
    shaped = {"key": node["key"], "title": node["title"]}
    for name in ("needs", "paths"):
        if node.get(name):
            shaped[name] = list(node[name])
    for name in ("budget_usd", "brief"):
        if node.get(name) is not None:
            shaped[name] = node[name]
    return shaped


def canonical_edge(edge: dict[str, str]) -> dict[str, str]:
    return {"node": edge["node"], "needs": edge["needs"]}


def canonical_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """Valid fields as they are stored: absent ones dropped, graph values in key order."""
    shaped = {}
    for name, value in fields.items():
        if value is None:
            continue
        if name == "nodes":
            value = [canonical_node(node) for node in value]
        elif name in ("needs", "drop_needs"):
            value = [canonical_edge(edge) for edge in value]
        elif name == "retire":
            value = list(value)
        elif value is REMOVED:
            value = 0  # a plan's budget removed: stored as 0
        shaped[name] = value
    return shaped


def transition_error(event_type: str, current_status: str | None) -> str | None:
    """Why `event_type` may not follow `current_status`, or None when it may."""
    if current_status in ALLOWED_FROM[event_type]:
        return None
    if current_status is None:
        return "the session has no events yet; it must begin with session_start"
    if event_type == START:
        return "the session already exists"
    if current_status == CLOSED:
        return "the session is closed; nothing can be appended after session_close"
    return f"{event_type} is not allowed while the session is {current_status}"
