"""A tiny MCP server, written with the `mcp` SDK, whose tools the tests change.

    python surface_server.py TOOLS.json            stdio
    python surface_server.py TOOLS.json --http P   streamable HTTP on 127.0.0.1:P (/mcp)
    python surface_server.py TOOLS.json --sse P    SSE on 127.0.0.1:P (/sse)
    python surface_server.py --hang PIDFILE        starts a child, writes both pids, never answers
    python surface_server.py --die TEXT            writes TEXT on stderr and exits 1
    python surface_server.py --orphan PIDFILE      starts a child that keeps our stdout, writes
                                                   both pids, exits 1 ("license check failed")
    python surface_server.py --daemon PIDFILE      double-forks a setsid'd grandchild that
                                                   keeps our stdout, writes both pids, hangs

TOOLS.json is a list of {"name", "description"?, "inputSchema"?}; it is read on every
tools/list, so a test can edit it between two probes (or while the HTTP server runs).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# The SDK is imported in the functions that serve, so --die and --hang start fast.


def build(tools_file: Path) -> Any:
    from mcp import types
    from mcp.server.lowlevel import Server

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        raw = json.loads(tools_file.read_text(encoding="utf-8"))
        tools = [
            types.Tool(
                name=t["name"],
                description=t.get("description"),
                input_schema=t.get("inputSchema", {"type": "object"}),
            )
            for t in raw
        ]
        return types.ListToolsResult(tools=tools)

    return Server("surface-test", version="1.0.0", on_list_tools=on_list_tools)


def serve_stdio(server: Any) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def serve_http(server: Any, port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def serve_sse(server: Any, port: int) -> None:
    import uvicorn
    from mcp.server.sse import SseServerTransport
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route

    sse = SseServerTransport("/messages/")

    class Endpoint:  # a raw ASGI endpoint: connect_sse answers the request itself
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            async with sse.connect_sse(scope, receive, send) as (read, write):
                await server.run(read, write, server.create_initialization_options())

    routes = [Route("/sse", endpoint=Endpoint()), Mount("/messages/", app=sse.handle_post_message)]
    uvicorn.run(Starlette(routes=routes), host="127.0.0.1", port=port, log_level="warning")


SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def hang(pidfile: Path) -> None:
    child = subprocess.Popen(SLEEPER)
    pidfile.write_text(f"{child.pid} {os.getpid()}")
    sys.stderr.write("hanging on purpose\n")
    sys.stderr.flush()
    while True:  # never reads stdin, never answers
        time.sleep(1)


def orphan(pidfile: Path) -> None:
    """Leave a child holding our stdout, and exit: the probe must not wait for its EOF."""
    child = subprocess.Popen(SLEEPER)
    pidfile.write_text(f"{child.pid} {os.getpid()}")
    sys.stderr.write("fatal: the license check failed\n")
    sys.stderr.flush()
    os._exit(1)  # no atexit, no waiting for the child


def daemon(pidfile: Path) -> None:
    """The classic double fork: the grandchild is in a session of its own, reparented to init,
    and still holds our stdout."""
    read, write = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(write, str(os.getpid()).encode())  # the pid survives the exec
            os.execv(SLEEPER[0], SLEEPER)
        os._exit(0)
    os.wait()
    os.close(write)
    grandchild = os.read(read, 32).decode()
    pidfile.write_text(f"{grandchild} {os.getpid()}")
    sys.stderr.write("daemonized\n")
    sys.stderr.flush()
    while True:  # never answers
        time.sleep(1)


def main(argv: list[str]) -> None:
    if argv[0] == "--hang":
        hang(Path(argv[1]))
    elif argv[0] == "--orphan":
        orphan(Path(argv[1]))
    elif argv[0] == "--daemon":
        daemon(Path(argv[1]))
    elif argv[0] == "--die":
        sys.stderr.write("starting up\n" + argv[1] + "\n")
        sys.exit(1)
    server = build(Path(argv[0]))
    if len(argv) > 2 and argv[1] == "--http":
        serve_http(server, int(argv[2]))
    elif len(argv) > 2 and argv[1] == "--sse":
        serve_sse(server, int(argv[2]))
    else:
        serve_stdio(server)


if __name__ == "__main__":
    main(sys.argv[1:])
