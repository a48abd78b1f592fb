"""The MCP server's tools (`sessions.api.mcp`): each an API route, with its description
for the agent and its input schema built from the route's own pydantic schemas."""

from dataclasses import dataclass, field

from mcp import types
from pydantic import TypeAdapter

from sessions.api import request_fields, requests
from sessions.domain import vocabulary

_SESSION_ID = TypeAdapter(requests.SessionId).json_schema()
_IDEMPOTENCY_KEY = {
    **TypeAdapter(requests.IdempotencyKey).json_schema(),
    "description": "Optional. Send the same key again when retrying after a timeout: the "
    "first answer is returned and nothing is appended twice.",
}


@dataclass(frozen=True)
class Tool:
    """An API route offered as a tool."""

    name: str
    method: str
    route: str  # under /api, with {session_id} or {plan_id}
    description: str
    body: type | None = None  # the route's body schema (POST)
    query: type | None = None  # the route's query schema (GET)
    fixed: dict = field(default_factory=dict)  # body fields the tool sets, e.g. the type
    renamed: dict = field(default_factory=dict)  # tool argument -> API field
    read_only: bool = False

    @property
    def path_argument(self) -> str | None:
        for name in ("session_id", "plan_id"):
            if "{" + name + "}" in self.route:
                return name
        return None

    def input_schema(self) -> dict:
        """The route's schema as the tool's arguments: its path parameter, its body or
        query fields (less those the tool sets; renamed ones under their tool name), and
        the idempotency key of a write."""
        source = (self.body or self.query).model_json_schema()
        inverse = {api: mine for mine, api in self.renamed.items()}
        properties, required = {}, []
        if self.path_argument:
            properties[self.path_argument] = _SESSION_ID
            required.append(self.path_argument)
        for name, schema in source.get("properties", {}).items():
            if name in self.fixed:
                continue
            properties[inverse.get(name, name)] = schema
            if name in source.get("required", ()):
                required.append(inverse.get(name, name))
        if not self.read_only:
            properties["idempotency_key"] = _IDEMPOTENCY_KEY
        schema = {"type": "object", "properties": properties, "additionalProperties": False}
        if required:
            schema["required"] = required
        if "$defs" in source:
            schema["$defs"] = source["$defs"]
        return schema

    def annotations(self) -> types.ToolAnnotations:
        # Nothing is ever destroyed: every write appends an event.
        return types.ToolAnnotations(
            read_only_hint=self.read_only,
            destructive_hint=False,
            idempotent_hint=self.read_only,
            open_world_hint=False,
        )


_REFUSALS_OF_AN_APPEND = (
    " Refusals: `forbidden` if you are not the session's owner (nor allowed to act on any"
    " session); `not_found` if there is no such session; `transition_not_allowed` if the"
    " session's status does not allow this event (the message names the status);"
    " `stale_expected_seq` if `expected_seq` is given and the session has moved past it"
    " (read it again with get_session); `invalid` for a malformed argument (the message"
    " names it)."
    " Pass `expected_seq` (the `seq` you last saw) to refuse the append if someone else"
    " appended meanwhile."
)

TOOLS = [
    Tool(
        "start_session",
        "POST",
        "/sessions",
        "Start a work session that you own, and get its view. Use it when you begin a task"
        " that others should see on the board. Give a `title`, or `plan_id` and `node` to"
        " work on a build plan's node (its title is the default). `session_id` is made for"
        " you when absent. Refusals: `session_exists` if a session with that id exists;"
        " `invalid` for a malformed argument; for a plan node, `node_not_ready` if its needs"
        " are not done or it already has a live session.",
        body=requests.StartSession,
        renamed={"session_id": "id"},
    ),
    Tool(
        "block_session",
        "POST",
        "/sessions/{session_id}/events",
        "Mark a session blocked, with the `reason` (what or whom it waits for). Use it as"
        " soon as you cannot go on, so a person sees it. A blocked session may be blocked"
        " again with another reason; each open block is listed until an unblock."
        + _REFUSALS_OF_AN_APPEND,
        body=requests.BlockEvent,
        fixed={"type": vocabulary.BLOCK},
    ),
    Tool(
        "unblock_session",
        "POST",
        "/sessions/{session_id}/events",
        "Clear every open block of a blocked session; an optional `note` says what comes"
        " next. Use it when what you waited for has arrived." + _REFUSALS_OF_AN_APPEND,
        body=requests.UnblockEvent,
        fixed={"type": vocabulary.UNBLOCK},
    ),
    Tool(
        "review_session",
        "POST",
        "/sessions/{session_id}/events",
        "Send an active session to review; the optional `note` says what to look at (e.g."
        " the pull request)." + _REFUSALS_OF_AN_APPEND,
        body=requests.ReviewEvent,
        fixed={"type": vocabulary.REVIEW},
    ),
    Tool(
        "close_session",
        "POST",
        "/sessions/{session_id}/events",
        "Close a session for good, with its `outcome`: done (the default), failed or"
        " abandoned. On a plan's node, done lets the nodes that need it start and failed"
        " stops them. Nothing can be appended after a close." + _REFUSALS_OF_AN_APPEND,
        body=requests.CloseEvent,
        fixed={"type": vocabulary.CLOSE},
    ),
    Tool(
        "progress_session",
        "POST",
        "/sessions/{session_id}/events",
        "Say you are alive (a heartbeat), with an optional `note` on what you are doing"
        " now; the status stays. Send one at least every few minutes while you work: a"
        " node's session silent past its plan's lease lapses, and another agent may take"
        " the node over. Sent with `expected_seq` (the seq you last saw), it also"
        " acknowledges the pending `messages` of get_session; it is refused"
        " (`stale_expected_seq`) if another arrived meanwhile: read it first. Give `paths`"
        " (relative to the repo's root) for the files you wrote since your last one."
        + _REFUSALS_OF_AN_APPEND,
        body=requests.ProgressEvent,
        fixed={"type": vocabulary.PROGRESS},
    ),
    Tool(
        "message_session",
        "POST",
        "/sessions/{session_id}/events",
        "Write to whoever works a session (`note`): its worker sees it among the view's"
        " `messages` before its next step. The session's owner, a lead, or for a plan"
        " node's session the plan's owner may send one; the status stays." + _REFUSALS_OF_AN_APPEND,
        body=requests.MessageEvent,
        fixed={"type": vocabulary.MESSAGE},
    ),
    Tool(
        "record_work",
        "POST",
        "/sessions/{session_id}/events",
        "Say where your work lands in the code: `repo` (owner/name), `branch`, `commit`"
        " (the head's full id), `pr` with `pr_url` and `pr_state`, or a `check` with its"
        " `check_state` and the `commit` it ran on. Any status, even closed; the status"
        " stays, and it is not a heartbeat. `pr_state: merged` closes an open session."
        + _REFUSALS_OF_AN_APPEND,
        body=requests.WorkEvent,
        fixed={"type": vocabulary.WORK},
    ),
    Tool(
        "get_session",
        "GET",
        "/sessions/{session_id}",
        "Read one session's view: status, owner, title, `seq` of its last event, open"
        " blockers, next action, time in each state, whether it needs attention. Give `at`"
        " (ISO 8601) to see it as it was then. Refusal: `not_found`.",
        query=requests.ViewOptions,
        read_only=True,
    ),
    Tool(
        "list_sessions",
        "GET",
        "/sessions",
        "List sessions, newest activity first, 50 a page, filtered by `status`, `owner`,"
        " text `q`, `stale`, `attention`; while `next` is not null, ask again with `page`"
        " 2, 3, and so on."
        " Use it to find work or see what others are doing.",
        query=requests.SessionFilters,
        read_only=True,
    ),
    Tool(
        "create_plan",
        "POST",
        "/plans",
        "Create a build plan: `nodes`, each with a `key`, a `title`, the keys it `needs`"
        " done first and, if you like, a `brief` (what its agent is to do). Agents then"
        " claim its ready nodes with claim_next_node."
        " `plan_id` is made for you when absent. Refusals: `invalid` for a cycle (named),"
        " an unknown key in `needs`, a duplicate key; `plan_exists` if the id is taken.",
        body=requests.CreatePlan,
        renamed={"plan_id": "id"},
    ),
    Tool(
        "get_plan",
        "GET",
        "/plans/{plan_id}",
        "Read a plan: each node's state (ready, running, blocked, done, failed,"
        " upstream_failed…), its session, progress and the critical path. Give `at` to"
        " see it as it was then. Refusal: `not_found`.",
        query=requests.PlanOptions,
        read_only=True,
    ),
    Tool(
        "amend_plan",
        "POST",
        "/plans/{plan_id}/events",
        "Change a plan (its owner, or a lead): add `nodes`, drop needs (`drop_needs`), add"
        " `needs`, `retire` nodes, applied in that order; set the plan's `budget_usd` (null"
        " removes it), nodes' `budgets`, `paths` and `briefs`, its `repo`. Refusals:"
        " `invalid` for a cycle,"
        " an unknown key or a retire that strands a node; `node_running` for retiring a node"
        " with a live session; `stale_expected_seq`; `forbidden` for others.",
        body=requests.AmendPlan,
        fixed={"type": vocabulary.PLAN_AMEND},
    ),
    Tool(
        "claim_next_node",
        "POST",
        "/plans/{plan_id}/claim",
        "Take the plan's next ready node, or reclaim a lapsed one (its silent session is"
        " closed): a session of yours is started on it and its view returned (its `node`"
        " says which), with its `brief` (what to do) and `last_attempt`, the previous worker's"
        " handoff (why it ended and what it was doing). Agents claiming at once always get"
        " different nodes. Send"
        " progress_session while you work, and close the session when the node's work is"
        " finished. Refusals: `nothing_ready` when no node is ready or reclaimable (try"
        " later, or read get_plan); `budget_spent` when what is left is over its budget (a"
        " person must raise it); `not_found` if there is no such plan.",
        body=requests.Claim,
    ),
    Tool(
        "list_reservations",
        "GET",
        "/reservations",
        "See who holds which paths in a repository (`repo`, owner/name): each running node"
        " of a plan on it holds its path patterns while its session runs. Give `path` (relative"
        " to the repo's root) to ask who holds that one before you write it; if someone does,"
        " leave it to them or message them.",
        query=request_fields.ReservationQuery,
        read_only=True,
    ),
    Tool(
        "read_feed",
        "GET",
        "/feed",
        "Read every event in global order after a cursor: pass `after` (0 at first, then"
        " the `next_after` of the last answer) and you never miss or repeat an event."
        " Narrow with `type`, `stream` (a session or plan id) or `plan`. Use it to notice"
        " when your blockers clear or when nodes become ready.",
        query=requests.FeedQuery,
        read_only=True,
    ),
]
BY_NAME = {tool.name: tool for tool in TOOLS}
