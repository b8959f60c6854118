"""A small MCP server for the MCP client tests, written with the official SDK's server API.

  mcp_echo_server.py            : serve over stdio
  mcp_echo_server.py --http     : serve streamable HTTP on 127.0.0.1, a free port; prints
                                  "port <n>" on stdout once the socket listens. When the
                                  environment has MCP_TEST_TOKEN, every request must carry the
                                  header `X-Fay-Token: <that value>` (else 401).

Tools: echo, add, slow (waits `seconds`), pid (this process's id), crash (exits the process
without answering) and forbidden (never allow-listed by the tests).
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("fay-test-echo")


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Answer after waiting the given number of seconds.")
async def slow(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "done"


@server.tool(description="The server's process id.")
def pid() -> str:
    return str(os.getpid())


@server.tool(description="Exit the server process at once, without answering.")
def crash() -> str:
    sys.stdout.flush()
    os._exit(3)


@server.tool(description="A tool no configuration allows.")
def forbidden() -> str:
    return "this must never run"


class TokenGate:
    """Plain ASGI middleware: 401 unless the X-Fay-Token header matches."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"x-fay-token") != self.token:
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"missing or wrong X-Fay-Token"})
            return
        await self.app(scope, receive, send)


def serve_http() -> None:
    app: Any = server.streamable_http_app()
    token = os.environ.get("MCP_TEST_TOKEN")
    if token:
        app = TokenGate(app, token)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(f"port {sock.getsockname()[1]}", flush=True)
    uvicorn_server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    uvicorn_server.run(sockets=[sock])


if __name__ == "__main__":
    if "--http" in sys.argv[1:]:
        serve_http()
    else:
        server.run("stdio")
