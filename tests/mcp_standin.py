"""Two real MCP servers on 127.0.0.1 for tests/real_clients.sh: streamable HTTP and SSE.

    python tests/mcp_standin.py LOG

binds two free ports, prints `{"http": PORT, "sse": PORT}` on one line, then serves until
killed: streamable HTTP at http://127.0.0.1:HTTP/mcp, SSE at http://127.0.0.1:SSE/sse. Every
request is appended to LOG as one JSON line {"port", "method", "path", "headers"}, so the
script can tell which transport each client used and what headers it sent.
Needs the `mcp` extra (the MCP Python SDK, with uvicorn).
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer


def server(name: str) -> MCPServer[Any]:
    mcp: MCPServer[Any] = MCPServer(name)

    @mcp.tool()
    def ping() -> str:
        """Answers pong."""
        return "pong"

    return mcp


def logged(app: Any, port: int, log: Path) -> Any:
    """The app, with each HTTP request written to `log` before it is handled."""

    async def wrapper(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            row = {"port": port, "method": scope["method"], "path": scope["path"]}
            row["headers"] = headers
            with log.open("a", encoding="utf-8") as out:
                out.write(json.dumps(row) + "\n")
        await app(scope, receive, send)

    return wrapper


def bound() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


async def main(log: Path) -> None:
    http_sock, sse_sock = bound(), bound()
    http_port, sse_port = http_sock.getsockname()[1], sse_sock.getsockname()[1]
    apps = [
        (http_sock, logged(server("standin-http").streamable_http_app(), http_port, log)),
        (sse_sock, logged(server("standin-sse").sse_app(), sse_port, log)),
    ]
    print(json.dumps({"http": http_port, "sse": sse_port}), flush=True)
    await asyncio.gather(*(serve(app, sock) for sock, app in apps))


async def serve(app: Any, sock: socket.socket) -> None:
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
