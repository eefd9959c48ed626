"""The reference Python MCP SDK (mcp 2.x) as a client of Talon's /mcp.

Usage: mcp_client.py URL TOKEN SESSION

Initialises (the 2025-11-25 handshake), lists every tool page by page,
calls `echo`, the policy-denied `exec` and `picture`; does the same over
the stateless 2026-07-28 lifecycle (`server/discover`); then tries a bad
token. Prints one JSON object with what it saw; the Rust test checks it
against the session's real tool table. Exits non-zero on any surprise.
"""

import json
import sys

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import ImageContent, PaginatedRequestParams, TextContent


def client(token: str, session: str) -> httpx2.AsyncClient:
    return create_mcp_http_client(
        headers={"Authorization": f"Bearer {token}", "X-Talon-Session": session}
    )


def leaves(exc: BaseException) -> list[str]:
    """The messages of an exception (group)'s leaf exceptions."""
    if isinstance(exc, BaseExceptionGroup):
        return [m for e in exc.exceptions for m in leaves(e)]
    return [f"{type(exc).__name__}: {exc}"]


def texts(result) -> list[str]:
    return [c.text for c in result.content if isinstance(c, TextContent)]


async def main(url: str, token: str, session: str) -> dict:
    seen: dict = {}
    async with client(token, session) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as mcp:
                init = await mcp.initialize()
                seen["protocol_version"] = init.protocol_version
                seen["server_name"] = init.server_info.name
                seen["has_tools_capability"] = init.capabilities.tools is not None

                tools, pages, cursor = [], 0, None
                while True:
                    params = PaginatedRequestParams(cursor=cursor) if cursor else None
                    page = await mcp.list_tools(params=params)
                    pages += 1
                    tools += [
                        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                        for t in page.tools
                    ]
                    cursor = page.next_cursor
                    if not cursor:
                        break
                    if pages > 100:
                        raise RuntimeError("tools/list never ends")
                seen["tools"] = tools
                seen["pages"] = pages

                echo = await mcp.call_tool("echo", {"text": "from python"})
                seen["echo"] = {"is_error": echo.is_error, "texts": texts(echo)}

                denied = await mcp.call_tool("exec", {"command": "id"})
                seen["exec"] = {"is_error": denied.is_error, "texts": texts(denied)}

                pic = await mcp.call_tool("picture", {})
                images = [
                    {"data": c.data, "mime_type": c.mime_type}
                    for c in pic.content
                    if isinstance(c, ImageContent)
                ]
                seen["picture"] = {"is_error": pic.is_error, "texts": texts(pic), "images": images}

    # The 2026-07-28 lifecycle: server/discover, then stateless requests.
    async with client(token, session) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as mcp:
                await mcp.discover()
                seen["modern_version"] = mcp.protocol_version
                names = []
                cursor = None
                while True:
                    params = PaginatedRequestParams(cursor=cursor) if cursor else None
                    page = await mcp.list_tools(params=params)
                    names += [t.name for t in page.tools]
                    cursor = page.next_cursor
                    if not cursor or len(names) > 1000:
                        break
                seen["modern_tools"] = names
                echo = await mcp.call_tool("echo", {"text": "modern"})
                seen["modern_echo"] = {"is_error": echo.is_error, "texts": texts(echo)}
                denied = await mcp.call_tool("exec", {"command": "id"})
                seen["modern_exec"] = {"is_error": denied.is_error, "texts": texts(denied)}

    # A bad token is refused before any MCP processing: the raw status.
    async with client("not-a-token", session) as http:
        resp = await http.post(
            url,
            headers={"Accept": "application/json, text/event-stream"},
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "py", "version": "0"},
                },
            },
        )
        seen["bad_token_status"] = resp.status_code
        seen["bad_token_body"] = resp.json()

    # And the SDK itself fails to connect with it.
    try:
        with anyio.fail_after(10):
            async with client("not-a-token", session) as http:
                async with streamable_http_client(url, http_client=http) as (read, write):
                    async with ClientSession(read, write) as mcp:
                        await mcp.initialize()
        seen["bad_token_sdk"] = "connected"
    except BaseException as exc:  # noqa: BLE001 - any failure is the expected outcome
        seen["bad_token_sdk"] = "refused: " + "; ".join(leaves(exc))
    return seen


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: mcp_client.py URL TOKEN SESSION")
    out = anyio.run(main, *sys.argv[1:])
    print(json.dumps(out))
