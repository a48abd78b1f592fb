"""Benchmark: the MCP server's overhead (issue 12).

    python bench/mcp_overhead.py [sqlite] [postgresql]

Against a real gunicorn (2 sync workers) on loopback, one session of 20 events, the
round trip of:
- `GET /api/sessions/<id>` (a new connection each, as the sync workers close them);
- a `tools/call` of `get_session` as one JSON-RPC POST to /mcp (what the server adds);
- the same call through the official SDK client (`mcp.Client` over streamable HTTP),
  what an agent sees.
3 runs of 200 calls each (after 20 warm-up calls); the median of each run, then the
median and range of the runs, and the ratios to the API's.
"""

import asyncio
import http.client
import json
import statistics
import time

from append_http import PORT, start_server
from common import report, run_per_engine, seed, setup_django, timed

RUNS, CALLS, WARMUP = 3, 200, 20
SESSION = "o0"


def api_get(token):
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    conn.request("GET", f"/api/sessions/{SESSION}", headers={"Authorization": f"Bearer {token}"})
    answer = conn.getresponse()
    assert answer.status == 200 and json.loads(answer.read())["id"] == SESSION
    conn.close()


CALL = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "get_session", "arguments": {"session_id": SESSION}},
    }
)


def mcp_post(token):
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }
    conn.request("POST", "/mcp", body=CALL, headers=headers)
    answer = conn.getresponse()
    document = json.loads(answer.read())
    assert answer.status == 200 and document["result"]["structuredContent"]["id"] == SESSION
    conn.close()


def timed_runs(call):
    return [timed(call, repeat=CALLS, warmup=WARMUP)[0] for _ in range(RUNS)]


def sdk_runs(token):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def runs():
        headers = {"Authorization": f"Bearer {token}"}
        url = f"http://127.0.0.1:{PORT}/mcp"
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            medians = []
            for _ in range(RUNS):
                samples = []
                for n in range(WARMUP + CALLS):
                    begin = time.perf_counter()
                    result = await client.call_tool("get_session", {"session_id": SESSION})
                    if n >= WARMUP:
                        samples.append((time.perf_counter() - begin) * 1000)
                    assert not result.is_error
                medians.append(statistics.median(samples))
            return medians

    return asyncio.run(runs())


def spread(values):
    return f"{statistics.median(values):.2f} ms ({min(values):.2f}–{max(values):.2f})"


def main(engine):
    setup_django(engine)
    seed(1, events_per_open=20)
    from django.contrib.auth.models import User

    from sessions.rules.tokens import create_token

    _, token = create_token(User.objects.create_user("bench"), "bench")
    server = start_server(engine)
    try:
        api = timed_runs(lambda: api_get(token))
        raw = timed_runs(lambda: mcp_post(token))
        sdk = sdk_runs(token)
    finally:
        server.terminate()
        server.wait(timeout=30)
    base = statistics.median(api)
    report(
        f"get_session over MCP against GET /api/sessions/<id> ({engine})",
        [
            (engine, "GET /api/sessions/<id>", spread(api), "1.00"),
            (engine, "MCP tools/call get_session, one POST", spread(raw), _ratio(raw, base)),
            (engine, "MCP get_session through the SDK client", spread(sdk), _ratio(sdk, base)),
        ],
        ["database", "round trip", "time", "÷ API"],
    )


def _ratio(values, base):
    return f"{statistics.median(values) / base:.2f}"


if __name__ == "__main__":
    run_per_engine(__file__, main)
