"""The MCP server at /mcp, driven by the official SDK's client over streamable HTTP
against a live server: every tool, its refusals as tool errors, the token's user as the
actor, and racing claims that never share a node."""

import asyncio

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sessions.domain.vocabulary import PLAN_CREATE, START
from sessions.models import Event
from sessions.rules.append import append_event
from tests.support.http import http_request
from tests.support.mcp import connected

pytestmark = pytest.mark.django_db(transaction=True)

# The tools the contract names (docs/rules.md, "Surfaces"), and the feed's.
CONTRACT_TOOLS = {
    "start_session",
    "block_session",
    "unblock_session",
    "review_session",
    "close_session",
    "progress_session",
    "message_session",
    "record_work",
    "get_session",
    "list_sessions",
    "create_plan",
    "get_plan",
    "amend_plan",
    "claim_next_node",
    "list_reservations",
    "read_feed",
}
READ_ONLY = {"get_session", "list_sessions", "get_plan", "list_reservations", "read_feed"}
CHAIN = [
    {"key": "design", "title": "Design"},
    {"key": "build", "title": "Build", "needs": ["design"]},
]


@pytest.fixture
def mcp(live_server):
    """Runs `steps(client)` in an MCP client session as the token's user; its result."""

    def run(token, steps, mode="auto"):
        async def session():
            async with connected(live_server.url, token, mode) as client:
                return await steps(client)

        return asyncio.run(session())

    return run


@pytest.fixture
def alice_token(alice, token_for):
    return token_for(alice)


async def start(client, session_id="fix-login", title="Fix login"):
    return await client.call_tool("start_session", {"session_id": session_id, "title": title})


# Listing --------------------------------------------------------------------------------


def test_the_tools_are_listed_with_descriptions_schemas_and_annotations(mcp, alice_token):
    async def steps(client):
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in mcp(alice_token, steps)}
    assert set(tools) == CONTRACT_TOOLS
    for name, tool in tools.items():
        assert len(tool.description) > 80, name
        assert tool.annotations.read_only_hint is (name in READ_ONLY)
        assert tool.annotations.destructive_hint is False
    block = tools["block_session"].input_schema
    assert block["required"] == ["session_id", "reason"]
    assert {"expected_seq", "idempotency_key"} <= set(block["properties"])
    assert "type" not in block["properties"]
    assert "id" not in tools["start_session"].input_schema["properties"]


def test_the_handshake_era_of_the_protocol_is_served_too(mcp, alice_token):
    async def steps(client):
        await start(client)
        return await client.call_tool("get_session", {"session_id": "fix-login"})

    result = mcp(alice_token, steps, mode="legacy")
    assert not result.is_error and result.structured_content["status"] == "active"


# Authentication -----------------------------------------------------------------------------


@pytest.mark.parametrize("header", [None, "Bearer ct_not-a-token", "Basic YWxpY2U6eA=="])
def test_mcp_without_a_valid_token_is_401(live_server, header):
    headers = {"Authorization": header} if header else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    answer = http_request(live_server.url, "POST", "/mcp", body, headers=headers)
    assert answer.status == 401
    assert answer.json()["error"] == "unauthorized"
    assert answer.headers["WWW-Authenticate"].startswith("Bearer")


# Every tool ----------------------------------------------------------------------------------


def test_a_session_s_whole_life_through_the_tools_lands_under_the_token_s_user(
    mcp, alice_token, api
):
    async def steps(client):
        calls = [
            ("start_session", {"session_id": "fix-login", "title": "Fix login"}),
            ("block_session", {"session_id": "fix-login", "reason": "needs CI secrets"}),
            ("unblock_session", {"session_id": "fix-login", "note": "rotated"}),
            ("review_session", {"session_id": "fix-login", "note": "PR 12"}),
            ("close_session", {"session_id": "fix-login", "outcome": "done"}),
        ]
        return [await client.call_tool(name, arguments) for name, arguments in calls]

    results = mcp(alice_token, steps)
    assert [r.is_error for r in results] == [False] * 5
    assert results[0].structured_content["status"] == "active"
    assert results[1].structured_content["event"]["reason"] == "needs CI secrets"
    assert results[4].structured_content["session"]["status"] == "closed"
    rows = list(Event.objects.filter(session="fix-login").order_by("seq"))
    assert [row.type for row in rows] == [
        "session_start",
        "session_block",
        "session_unblock",
        "session_review",
        "session_close",
    ]
    assert {row.actor for row in rows} == {"alice"}


def test_a_heartbeat_and_a_message_through_the_tools_keep_the_status(mcp, alice_token):
    async def steps(client):
        calls = [
            ("start_session", {"session_id": "fix-login", "title": "Fix login"}),
            ("message_session", {"session_id": "fix-login", "note": "the API changed"}),
            ("progress_session", {"session_id": "fix-login", "note": "read it", "expected_seq": 2}),
        ]
        return [await client.call_tool(name, arguments) for name, arguments in calls]

    _, messaged, progressed = mcp(alice_token, steps)
    assert messaged.structured_content["session"]["message_count"] == 1
    view = progressed.structured_content["session"]
    assert (view["status"], view["message_count"], view["progress"]["note"]) == (
        "active",
        0,
        "read it",
    )


def test_where_the_work_lands_is_recorded_through_the_tools(mcp, alice_token):
    head = "3f2c" + "0" * 36

    async def steps(client):
        await client.call_tool("start_session", {"session_id": "fix-login", "title": "Fix"})
        reported = {"session_id": "fix-login", "repo": "acme/shop", "branch": "fix", "commit": head}
        return await client.call_tool("record_work", reported)

    recorded = mcp(alice_token, steps)
    work = recorded.structured_content["session"]["work"]
    assert (work["repo"], work["branch"], work["commit"]) == ("acme/shop", "fix", head)


def test_a_claim_through_the_tools_carries_the_last_attempt(mcp, alice_token, alice):
    from datetime import timedelta

    from django.utils import timezone

    then = timezone.now() - timedelta(hours=2)
    fields = {"title": "Ship", "nodes": CHAIN[:1], "lease": 30}
    append_event("ship", "plan_create", fields, user=alice, now=then)
    append_event("old", "session_start", {"plan": "ship", "node": "design"}, user=alice, now=then)

    async def steps(client):
        return await client.call_tool("claim_next_node", {"plan_id": "ship"})

    claimed = mcp(alice_token, steps).structured_content
    assert claimed["node"] == "design"
    assert claimed["last_attempt"]["session"] == "old"
    assert claimed["last_attempt"]["outcome"] == "lapsed"


def test_read_tools_give_the_api_s_json(mcp, alice_token, api):
    async def steps(client):
        await start(client)
        await client.call_tool("create_plan", {"plan_id": "ship", "title": "Ship", "nodes": CHAIN})
        return {
            "session": await client.call_tool("get_session", {"session_id": "fix-login"}),
            "list": await client.call_tool("list_sessions", {"status": "active"}),
            "plan": await client.call_tool("get_plan", {"plan_id": "ship"}),
            "feed": await client.call_tool("read_feed", {"after": 0, "limit": 10}),
        }

    results = mcp(alice_token, steps)
    same = {
        "session": "/api/sessions/fix-login",
        "list": "/api/sessions?status=active",
        "plan": "/api/plans/ship",
        "feed": "/api/feed?after=0&limit=10",
    }
    for name, path in same.items():
        answer = api("GET", path, token=alice_token).json()
        got = results[name].structured_content
        if name == "session":  # its age moves with the clock
            got.pop("time_in_state"), answer.pop("time_in_state")
        assert got == answer, name
    assert [item["type"] for item in results["feed"].structured_content["items"]] == [
        "session_start",
        "plan_create",
    ]


def test_plans_are_created_amended_and_claimed_through_the_tools(mcp, alice_token):
    async def steps(client):
        made = await client.call_tool(
            "create_plan", {"plan_id": "ship", "title": "Ship", "nodes": CHAIN}
        )
        amended = await client.call_tool(
            "amend_plan",
            {"plan_id": "ship", "nodes": [{"key": "docs", "title": "Docs", "needs": ["build"]}]},
        )
        claimed = await client.call_tool("claim_next_node", {"plan_id": "ship"})
        return made, amended, claimed

    made, amended, claimed = mcp(alice_token, steps)
    assert not made.is_error and made.structured_content["id"] == "ship"
    keys = [node["key"] for node in amended.structured_content["plan"]["nodes"]]
    assert keys == ["design", "build", "docs"]
    assert claimed.structured_content["node"] == "design"
    assert claimed.structured_content["owner"] == "alice"


def test_a_repeated_idempotency_key_appends_once(mcp, alice_token):
    async def steps(client):
        await start(client)
        block = {"session_id": "fix-login", "reason": "CI", "idempotency_key": "try-1"}
        return [await client.call_tool("block_session", block) for _ in range(2)]

    first, again = mcp(alice_token, steps)
    assert first.structured_content["event"] == again.structured_content["event"]
    assert Event.objects.filter(session="fix-login").count() == 2


# Refusals, as tool errors ---------------------------------------------------------------


def refusal(result):
    assert result.is_error
    document = result.structured_content
    assert result.content[0].text == f"{document['error']}: {document['detail']}"
    return document["error"], document["detail"]


def test_a_stale_expected_seq_is_a_tool_error_and_writes_nothing(mcp, alice_token):
    async def steps(client):
        await start(client)
        block = {"session_id": "fix-login", "reason": "CI", "expected_seq": 5}
        return await client.call_tool("block_session", block)

    code, detail = refusal(mcp(alice_token, steps))
    assert code == "stale_expected_seq" and "seq 1" in detail
    assert Event.objects.filter(session="fix-login").count() == 1


def test_a_non_owner_s_append_is_a_tool_error(mcp, alice_token, bob, token_for):
    mcp(alice_token, start)

    async def steps(client):
        return await client.call_tool("block_session", {"session_id": "fix-login", "reason": "x"})

    code, detail = refusal(mcp(token_for(bob), steps))
    assert code == "forbidden" and "alice" in detail
    assert Event.objects.filter(session="fix-login").count() == 1


def test_claiming_when_nothing_is_ready_is_a_tool_error(mcp, alice_token):
    async def steps(client):
        await client.call_tool("create_plan", {"plan_id": "ship", "title": "Ship", "nodes": CHAIN})
        await client.call_tool("claim_next_node", {"plan_id": "ship"})
        return await client.call_tool("claim_next_node", {"plan_id": "ship"})

    code, _ = refusal(mcp(alice_token, steps))
    assert code == "nothing_ready"


def test_a_plan_with_a_cycle_is_a_tool_error_naming_it(mcp, alice_token):
    loop = [
        {"key": "a", "title": "A", "needs": ["b"]},
        {"key": "b", "title": "B", "needs": ["a"]},
    ]

    async def steps(client):
        return await client.call_tool(
            "create_plan", {"plan_id": "loop", "title": "L", "nodes": loop}
        )

    code, detail = refusal(mcp(alice_token, steps))
    assert code == "invalid" and "cycle" in detail
    assert not Event.objects.exists()


@pytest.mark.parametrize(
    ("name", "arguments", "code"),
    [
        ("get_session", {"session_id": "../admin"}, "invalid"),
        ("get_session", {"session_id": 7}, "invalid"),
        ("get_session", {}, "invalid"),
        ("get_session", {"session_id": "nobody"}, "not_found"),
        ("block_session", {"session_id": "fix-login"}, "invalid"),
        ("block_session", {"session_id": "fix-login", "reason": "x", "colour": 1}, "invalid"),
        ("list_sessions", {"status": "sleeping"}, "invalid"),
        ("teleport", {}, "unknown_tool"),
    ],
)
def test_bad_arguments_are_tool_errors_never_server_errors(mcp, alice_token, name, arguments, code):
    async def steps(client):
        await start(client)
        return await client.call_tool(name, arguments)

    assert refusal(mcp(alice_token, steps))[0] == code
    assert Event.objects.count() == 1


# Racing claims -------------------------------------------------------------------------------


def test_two_clients_claiming_from_one_plan_never_get_the_same_node(live_server, alice, token_for):
    nodes = [{"key": f"n{n}", "title": f"Node {n}"} for n in range(12)]
    tokens = [token_for(alice, name=f"agent-{n}") for n in range(2)]

    async def claim_all(token):
        claimed = []
        async with connected(live_server.url, token) as client:
            while True:
                result = await client.call_tool("claim_next_node", {"plan_id": "wide"})
                if result.is_error:
                    assert result.structured_content["error"] == "nothing_ready"
                    return claimed
                claimed.append(result.structured_content["node"])

    async def race():
        async with connected(live_server.url, tokens[0]) as client:
            await client.call_tool("create_plan", {"plan_id": "wide", "title": "W", "nodes": nodes})
        return await asyncio.gather(*(claim_all(token) for token in tokens))

    first, second = asyncio.run(race())
    assert not set(first) & set(second)
    assert sorted(first + second) == sorted(node["key"] for node in nodes)


def test_gunicorn_s_sync_workers_serve_mcp_as_deployed(gunicorn, alice_token):
    async def steps():
        async with connected(gunicorn.url, alice_token) as client:
            await start(client)
            return await client.call_tool("get_session", {"session_id": "fix-login"})

    result = asyncio.run(steps())
    assert not result.is_error and result.structured_content["owner"] == "alice"


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
def test_mcp_answers_only_post_so_no_stream_holds_a_worker(live_server, alice_token, method):
    answer = http_request(live_server.url, method, "/mcp", token=alice_token)
    assert answer.status == 405 and answer.headers["Allow"] == "POST"


@pytest.mark.parametrize(
    ("body", "status"),
    [(b"{bad", 400), (b"[]", 400), (b'{"jsonrpc": "2.0", "id": 1, "method": "nope"}', 200)],
)
def test_a_malformed_message_gets_a_json_rpc_error_not_a_server_error(
    live_server, alice_token, body, status
):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    answer = http_request(live_server.url, "POST", "/mcp", body, token=alice_token, headers=headers)
    assert answer.status == status
    assert "error" in answer.json()


def test_a_tool_call_looks_its_token_up_once(client, alice, token_for):
    append_event("s1", START, {"title": "T"}, user=alice)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "get_session", "arguments": {"session_id": "s1"}},
    }
    headers = {
        "HTTP_AUTHORIZATION": f"Bearer {token_for(alice)}",
        "HTTP_ACCEPT": "application/json, text/event-stream",
    }
    client.post("/mcp", call, content_type="application/json", **headers)  # token used
    with CaptureQueriesContext(connection) as captured:
        answer = client.post("/mcp", call, content_type="application/json", **headers)
    assert answer.status_code == 200 and '"isError":false' in answer.content.decode()
    lookups = [q["sql"] for q in captured.captured_queries if "digest" in q["sql"]]
    assert len(lookups) == 1, lookups


def test_a_retried_start_session_without_an_id_answers_with_the_first_session(mcp, alice_token):
    async def steps(client):
        arguments = {"title": "Fix login", "idempotency_key": "retry-1"}
        first = await client.call_tool("start_session", arguments)
        again = await client.call_tool("start_session", arguments)
        return first.structured_content, again.structured_content

    first, again = mcp(alice_token, steps)
    assert again["id"] == first["id"]
    assert Event.objects.filter(type="session_start").count() == 1


def test_list_reservations_says_who_holds_a_path(mcp, alice, alice_token):
    nodes = [{"key": "billing", "title": "Billing", "paths": ["src/billing"]}]
    append_event("p", PLAN_CREATE, {"title": "P", "repo": "acme/shop", "nodes": nodes}, user=alice)
    append_event("s1", START, {"plan": "p", "node": "billing"}, user=alice)

    async def steps(client):
        return await client.call_tool(
            "list_reservations", {"repo": "acme/shop", "path": "src/billing/ledger.py"}
        )

    found = mcp(alice_token, steps)
    assert not found.is_error
    assert [(r["node"], r["session"]) for r in found.structured_content["items"]] == [
        ("billing", "s1")
    ]
