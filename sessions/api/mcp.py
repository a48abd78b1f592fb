"""The MCP server at /mcp: every agent action as a tool, with the API's tokens.

Each tool *is* an API route, dispatched in process: its arguments become the route's
path, body or query (and `idempotency_key` its `Idempotency-Key` header), its input
schema is built from the route's own pydantic schemas, and its result is the route's
JSON as structured content. So validation, permission checks, `expected_seq`,
idempotency and the one append path are the API's, by construction; a refusal is a tool
error carrying the API's `error` code and `detail` sentence.

The protocol is the official `mcp` SDK's (its low-level `Server` and its streamable-HTTP
session manager, stateless, with JSON answers rather than event streams). Each POST to
/mcp is handed to it as an ASGI request from a plain Django view, so gunicorn's sync
workers serve MCP beside everything else, on the same port, with no second process.
"""

import contextvars
import io
import json
from dataclasses import dataclass, field
from urllib.parse import urlencode

import anyio
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import resolve
from django.views.decorators.csrf import csrf_exempt
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from pydantic import TypeAdapter

from sessions.api import requests
from sessions.domain import vocabulary
from sessions.http import error_body, error_response
from sessions.rules.tokens import TokenRefused, bearer_of_header

PATH = "/mcp"

# The /mcp request a tool call came in on: its token, host and scheme are the tool's.
_calling: contextvars.ContextVar[HttpRequest] = contextvars.ContextVar("mcp_request")

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
        " (`stale_expected_seq`) if another arrived meanwhile: read it first."
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
        "Create a build plan: `nodes`, each with a `key`, a `title` and the keys it"
        " `needs` done first. Agents then claim its ready nodes with claim_next_node."
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
        " removes it), nodes' `budgets` and `paths`, its `repo`. Refusals: `invalid` for a cycle,"
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
        " says which), with `last_attempt`, the previous worker's handoff (why it ended and"
        " what it was doing). Agents claiming at once always get different nodes. Send"
        " progress_session while you work, and close the session when the node's work is"
        " finished. Refusals: `nothing_ready` when no node is ready or reclaimable (try"
        " later, or read get_plan); `budget_spent` when what is left is over its budget (a"
        " person must raise it); `not_found` if there is no such plan.",
        body=requests.Claim,
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


# Calling a tool: its route, in process ------------------------------------------------


def _query_value(value: object) -> object:
    return json.dumps(value) if isinstance(value, bool) else value


def _api_request(outer: HttpRequest, tool: Tool, arguments: dict) -> tuple[str, WSGIRequest]:
    """The API request a tool call stands for, carrying the /mcp request's headers (its
    token, host and scheme)."""
    arguments = dict(arguments)
    route = tool.route
    if tool.path_argument:
        stream_id = arguments.pop(tool.path_argument)
        route = route.replace("{" + tool.path_argument + "}", stream_id)
    key = arguments.pop("idempotency_key", None)
    path = f"/api{route}"
    query, body = "", b""
    if tool.method == "GET":
        query = urlencode({name: _query_value(v) for name, v in arguments.items()})
    else:
        fields = {tool.renamed.get(name, name): value for name, value in arguments.items()}
        body = json.dumps({**fields, **tool.fixed}).encode()
    environ = {
        name: value
        for name, value in outer.META.items()
        if name not in ("HTTP_IDEMPOTENCY_KEY", "CONTENT_TYPE", "CONTENT_LENGTH")
    }
    environ.update(
        REQUEST_METHOD=tool.method,
        PATH_INFO=path,
        SCRIPT_NAME="",
        QUERY_STRING=query,
        CONTENT_TYPE="application/json",
        CONTENT_LENGTH=str(len(body)),
    )
    environ["wsgi.input"] = io.BytesIO(body)
    if key is not None:
        environ["HTTP_IDEMPOTENCY_KEY"] = str(key)
    request = WSGIRequest(environ)
    request.user = AnonymousUser()  # the token decides, as for any API request
    request.token_bearer = outer.token_bearer  # which /mcp looked up just now
    return path, request


def call(tool: Tool, arguments: dict) -> tuple[int, dict]:
    """Run the tool's route for the current /mcp request: (status, the route's JSON)."""
    if tool.path_argument:
        # Checked before it becomes part of a path, where "../x" would route elsewhere.
        problem = vocabulary.session_id_error(arguments.get(tool.path_argument))
        if problem:
            detail = f"Invalid arguments: {tool.path_argument} {problem}."
            return 400, error_body("invalid", detail)
    path, request = _api_request(_calling.get(), tool, arguments)
    match = resolve(path)
    response = match.func(request, *match.args, **match.kwargs)
    return response.status_code, json.loads(response.content)


def _text(document: dict) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=json.dumps(document, ensure_ascii=False))]


async def _list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=tool.name,
                description=tool.description,
                input_schema=tool.input_schema(),
                annotations=tool.annotations(),
            )
            for tool in TOOLS
        ]
    )


def _refusal(document: dict) -> types.CallToolResult:
    # The API's code and sentence lead, for a model reading only the text.
    said = f"{document['error']}: {document['detail']}"
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=said)],
        structured_content=document,
        is_error=True,
    )


async def _call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    tool = BY_NAME.get(params.name)
    if tool is None:
        return _refusal(error_body("unknown_tool", f"There is no tool {params.name!r}."))
    status, document = await sync_to_async(call)(tool, params.arguments or {})
    if status >= 300:
        return _refusal(document)
    return types.CallToolResult(content=_text(document), structured_content=document)


SERVER = Server(
    "control-tower",
    version="1",
    instructions=(
        "Control Tower coordinates work sessions of people and agents. Start a session"
        " when you begin a task, block it with a reason as soon as you wait on something,"
        " unblock it when that clears, send it to review, and close it with an outcome."
        " Build plans are DAGs of nodes: claim_next_node gives you ready work."
    ),
    on_list_tools=_list_tools,
    on_call_tool=_call_tool,
)


# Serving /mcp from a Django view ------------------------------------------------------


async def _serve(scope: dict, body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """One HTTP request through the SDK's stateless streamable-HTTP transport."""
    manager = StreamableHTTPSessionManager(app=SERVER, stateless=True, json_response=True)
    answered = anyio.Event()
    start: dict = {"status": 500, "headers": []}
    chunks: list[bytes] = []
    delivered = False

    async def receive() -> dict:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            start.update(status=message["status"], headers=message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                answered.set()

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return start["status"], start["headers"], b"".join(chunks)


def _scope(request: HttpRequest) -> dict:
    host, _, port = request.get_host().partition(":")
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": PATH,
        "raw_path": PATH.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.items()
        ],
        "server": (host, int(port or (443 if request.is_secure() else 80))),
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
    }


def _unauthorized(detail: str, code: str = "unauthorized") -> JsonResponse:
    response = error_response(401, code, detail)
    response["WWW-Authenticate"] = 'Bearer realm="control-tower"'
    return response


@csrf_exempt
def endpoint(request: HttpRequest) -> HttpResponse:
    """/mcp: the bearer token first (401 without one), then the SDK answers a POST.

    Only POST is served: every tool answers at once, so there is no event stream to open
    with a GET (which would hold a worker for as long as a client keeps it) and no
    session to end with a DELETE."""
    if request.method != "POST":
        response = error_response(405, "method_not_allowed", "Send MCP messages with POST.")
        response["Allow"] = "POST"
        return response
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return _unauthorized("Send a token as 'Authorization: Bearer <token>'.")
    try:
        bearer = bearer_of_header(f"Bearer {token}")
    except TokenRefused as refused:
        return _unauthorized(refused.detail, refused.code)
    request.token_bearer = bearer  # the tools' API requests act as it, not asking again
    try:
        body = request.body
    except RequestDataTooBig:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        detail = f"The body is larger than {limit} bytes."
        return error_response(413, "too_large", detail)
    calling = _calling.set(request)
    try:
        status, headers, content = async_to_sync(_serve)(_scope(request), body)
    finally:
        _calling.reset(calling)
    response = HttpResponse(content, status=status)
    for name, value in headers:
        if name.lower() not in (b"content-length", b"connection", b"transfer-encoding"):
            response[name.decode("latin-1")] = value.decode("latin-1")
    return response
