"""A client of /mcp, the official SDK's, over streamable HTTP."""

from contextlib import asynccontextmanager

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def connected(url: str, token: str, mode: str = "auto"):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode) as c:
        yield c
