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
from urllib.parse import urlencode

import anyio
from asgiref.sync import async_to_sync, sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import resolve
from django.views.decorators.csrf import csrf_exempt
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from sessions import config
from sessions.api.mcp_tools import BY_NAME, TOOLS, Tool
from sessions.domain import vocabulary
from sessions.http import error_body, error_response
from sessions.rules.tokens import TokenRefused, bearer_of_header

PATH = "/mcp"

# The /mcp request a tool call came in on: its token, host and scheme are the tool's.
_calling: contextvars.ContextVar[HttpRequest] = contextvars.ContextVar("mcp_request")

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
        limit = config.current().request_body_limit
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
