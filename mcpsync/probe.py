"""Start locked servers and read their tool surface: initialize + tools/list, bounded in time.

Through the `mcp` SDK's own clients (stdio, streamable HTTP, SSE), imported here only, so only
`probe` and `verify --surface` need the `mcpsync[mcp]` extra. The SDK's stdio client starts the
server in its own process group and kills that group when the session ends, also when our
timeout cancels it: a server that hangs or exits leaves no process behind.

Values come from the environment only: a launch's `${NAME}` references (env, args, url,
headers) are filled from os.environ, and a missing one is an error naming it. The server gets
the SDK's small default environment (PATH, HOME, …) plus its launch's `env`, as a client does.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mcpsync.errors import EnvFailure, InputError
from mcpsync.launch.checks import REFERENCE
from mcpsync.lockfile import LockedServer
from mcpsync.surface import Surface, from_listing

DEFAULT_TIMEOUT = 30.0
CONCURRENCY = 8  # servers started at once; each is a process (npx, uvx, docker) of its own
STDERR_TAIL = 3  # lines of a failed server's stderr shown in its one-line error
TAIL_CHARS = 400
INSTALL_HINT = "pip install 'mcpsync[mcp]'"


@dataclass(frozen=True)
class Outcome:
    """One server's probe: its surface, or one line saying why not (`code` 2 or 3)."""

    alias: str
    surface: Surface | None = None
    error: str | None = None
    code: int = 0
    seconds: float = 0.0


def require_sdk(what: str) -> None:
    """Exit 3 with the install hint when the MCP SDK is missing (as `mcp serve` does)."""
    try:
        import mcp.client.session  # noqa: F401
    except ImportError:
        raise EnvFailure(f"{what} needs the MCP SDK: {INSTALL_HINT}") from None


def probe_all(
    servers: Sequence[LockedServer],
    *,
    root: Path,
    timeout: float = DEFAULT_TIMEOUT,
    concurrency: int = CONCURRENCY,
    environ: Mapping[str, str] | None = None,
) -> list[Outcome]:
    """Probe every server, `concurrency` at a time; outcomes in the order of `servers`."""
    import anyio

    env = os.environ if environ is None else environ
    results: dict[str, Outcome] = {}

    async def main() -> None:
        limiter = anyio.CapacityLimiter(max(1, concurrency))

        async def one(server: LockedServer) -> None:
            async with limiter:
                outcome = await _probe(server, root, timeout, env)
            results[server.alias] = outcome

        async with anyio.create_task_group() as tasks:
            for server in servers:
                tasks.start_soon(one, server)

    anyio.run(main)
    return [results[s.alias] for s in servers]


async def _probe(
    server: LockedServer, root: Path, timeout: float, environ: Mapping[str, str]
) -> Outcome:
    import anyio

    started = time.monotonic()
    alias = server.alias

    def failed(message: str, code: int = 3) -> Outcome:
        return Outcome(
            alias,
            error=f"server '{alias}': {message}",
            code=code,
            seconds=time.monotonic() - started,
        )

    try:
        launch = _filled(server, environ)
    except InputError as exc:
        return failed(exc.message, 2)
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            with anyio.fail_after(timeout):
                tools = await _list_tools(launch, root, errlog)
        except TimeoutError:
            return failed(
                f"no answer to initialize + tools/list within {timeout:g}s" + _tail(errlog)
            )
        except OSError as exc:
            if launch["transport"] != "stdio":
                return failed(f"{_what_failed(launch)}: {exc.strerror or exc}")
            return failed(f"cannot start `{launch['command']}`: {exc.strerror or exc}")
        except Exception as exc:  # noqa: BLE001 - any SDK or transport failure is one line
            return failed(f"{_what_failed(launch)}: {_reason(exc)}" + _tail(errlog))
    try:
        surface = from_listing(tools)
    except ValueError as exc:
        return failed(f"unusable tools/list answer: {exc}")
    return Outcome(alias, surface=surface, seconds=time.monotonic() - started)


def _what_failed(launch: Mapping[str, Any]) -> str:
    if launch["transport"] == "stdio":
        return "the server failed to start or answer"
    return f"no MCP session with {launch['url']}"


def _reason(exc: BaseException) -> str:
    """The innermost useful message of an exception (task groups wrap failures in groups)."""
    while getattr(exc, "exceptions", None):  # an exception group (3.11+, or the backport)
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:TAIL_CHARS]


def _tail(errlog: IO[str]) -> str:
    """The last lines the server wrote on stderr, on one line."""
    errlog.flush()
    errlog.seek(0)
    lines = [line.strip() for line in errlog.read().splitlines() if line.strip()]
    if not lines:
        return ""
    tail = " | ".join(lines[-STDERR_TAIL:])
    if len(tail) > TAIL_CHARS:
        tail = "…" + tail[-TAIL_CHARS:]
    return f"; stderr: {tail}"


# ---------------------------------------------------------------- the launch, filled


def _filled(server: LockedServer, environ: Mapping[str, str]) -> dict[str, Any]:
    """The launch with every ${NAME} replaced from the environment. InputError names the
    first missing variable."""
    launch = server.launch

    def fill(value: str) -> str:
        def sub(match: Any) -> str:
            name = match.group(1)
            if name not in environ:
                raise InputError(
                    f"${{{name}}} is not set in the environment (export {name}=… and retry)"
                )
            return environ[name]

        return REFERENCE.sub(sub, value)

    if launch.transport == "stdio" or not launch.url:
        if not launch.command:
            raise InputError("its launch has no command and no url; run `mcpsync lock`")
        return {
            "transport": "stdio",
            "command": fill(launch.command),
            "args": [fill(a) for a in launch.args],
            "env": {k: fill(v) for k, v in launch.env.items()},
        }
    if launch.command:
        raise InputError(
            f"it is a package that serves {launch.url} itself; probe starts stdio packages "
            "and connects to remote servers only"
        )
    return {
        "transport": launch.transport,
        "url": fill(launch.url),
        "headers": {k: fill(v) for k, v in launch.headers.items()},
    }


# ---------------------------------------------------------------- the SDK


async def _list_tools(launch: Mapping[str, Any], root: Path, errlog: IO[str]) -> list[Any]:
    from contextlib import AsyncExitStack

    from mcp.client.session import ClientSession

    async with AsyncExitStack() as stack:
        transport = await _transport(stack, launch, root, errlog)
        read, write = await stack.enter_async_context(transport)
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        return await _all_tools(session)


async def _transport(stack: Any, launch: Mapping[str, Any], root: Path, errlog: IO[str]) -> Any:
    if launch["transport"] == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=launch["command"], args=launch["args"], env=launch["env"], cwd=root
        )
        return stdio_client(params, errlog=errlog)  # type: ignore[arg-type]
    if launch["transport"] == "sse":
        from mcp.client.sse import sse_client

        return sse_client(launch["url"], headers=launch["headers"] or None)
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    client = create_mcp_http_client(headers=launch["headers"] or None)
    await stack.enter_async_context(client)  # a client we pass in is ours to close
    return streamable_http_client(launch["url"], http_client=client)


async def _all_tools(session: Any) -> list[dict[str, Any]]:
    """Every page of tools/list, as JSON objects (aliases: `inputSchema`)."""
    from mcp.types import PaginatedRequestParams

    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(1000):  # a server that pages forever is a failure, not a hang
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        result = await session.list_tools(params=params)
        tools += [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in result.tools]
        cursor = result.next_cursor
        if not cursor:
            return tools
    raise ValueError("tools/list kept returning a next cursor")
