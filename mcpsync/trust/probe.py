"""Start locked servers and read their tool surface: initialize + tools/list, bounded in time.

Through the `mcp` SDK's session and its remote clients (streamable HTTP, SSE), imported here
only, so only `probe` and `verify --surface` need the `mcpsync[mcp]` extra. A stdio server is
started here, as the leader of a process group of its own (mcpsync.procgroup), and on every
way out (answer, timeout, early exit, error, Ctrl-C) the whole group is stopped and the
leader reaped: a server that hangs, exits or forks leaves no process behind. The server we
start is the server: when it exits, the probe fails at once with its exit code, even if a
child it left still holds its stdout.

Values come from the environment only: a launch's `${NAME}` references (env, args, url,
headers) are filled from os.environ, and a missing one is an error naming it. The server gets
the SDK's small default environment (PATH, HOME, …) plus its launch's `env`, as a client does.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from msgspec import Struct

from mcpsync import procgroup
from mcpsync.errors import EnvFailure, InputError
from mcpsync.launch.checks import REFERENCE
from mcpsync.lock.lockfile import LockedServer
from mcpsync.lock.surface import Surface, from_listing

DEFAULT_TIMEOUT = 30.0
CONCURRENCY = 8  # servers started at once; each is a process (npx, uvx, docker) of its own
STDERR_TAIL = 3  # lines of a failed server's stderr shown in its one-line error
TAIL_CHARS = 400
INSTALL_HINT = "pip install 'mcpsync[mcp]'"
CLOSE_GRACE = 1.0  # seconds a server that answered gets to exit after its stdin closes
EXIT_GRACE = 0.5  # seconds to learn a server's exit code after its stdout closed


class Outcome(Struct, frozen=True):
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

    others = procgroup.live()  # groups something else in this process runs
    try:
        anyio.run(main)
    finally:  # an interrupt that tore the loop down before a group's own teardown ran
        procgroup.stop_all(besides=others)
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
        except _Exited as exc:
            return failed(
                f"the server exited with code {exc.code} before answering" + _tail(errlog)
            )
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

    if launch["transport"] == "stdio":
        return await _stdio_tools(launch, root, errlog)
    async with AsyncExitStack() as stack:
        transport = await _remote(stack, launch)
        read, write = await stack.enter_async_context(transport)
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        return await _all_tools(session)


async def _remote(stack: Any, launch: Mapping[str, Any]) -> Any:
    if launch["transport"] == "sse":
        from mcp.client.sse import sse_client

        return sse_client(launch["url"], headers=launch["headers"] or None)
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    client = create_mcp_http_client(headers=launch["headers"] or None)
    await stack.enter_async_context(client)  # a client we pass in is ours to close
    return streamable_http_client(launch["url"], http_client=client)


# ---------------------------------------------------------------- a stdio server, and its group


class _Exited(Exception):
    """The server exited before the probe had its answer."""

    def __init__(self, code: int) -> None:
        super().__init__(f"exited with code {code}")
        self.code = code


async def _stdio_tools(launch: Mapping[str, Any], root: Path, errlog: IO[str]) -> list[Any]:
    """Start the server as a group leader, list its tools, and stop the whole group."""
    import anyio
    from mcp.client.stdio import get_default_environment

    token = procgroup.new_token()
    env = procgroup.marked(get_default_environment() | launch["env"], token)
    process = await anyio.open_process(
        [launch["command"], *launch["args"]],
        env=env,
        stderr=errlog,
        cwd=root,
        start_new_session=True,
    )
    group = procgroup.Group(process.pid, token)
    procgroup.track(group)  # no await between the start and this line: nothing can leak
    answered = False
    try:
        tools = await _session_over(process)
        answered = True
        return tools
    except Exception as exc:
        exited = await _exit_of(process)
        if exited is None:
            raise
        raise exited from exc
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process, group, answered)


async def _session_over(process: Any) -> list[Any]:
    """initialize + tools/list over the process's stdin/stdout; _Exited when it exits first."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.shared.message import SessionMessage

    to_session, read = anyio.create_memory_object_stream[Any](0)
    write, to_server = anyio.create_memory_object_stream[SessionMessage](0)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_pump_out, process, to_session)
        tasks.start_soon(_pump_in, process, to_server)
        tasks.start_soon(_watch, process)
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await _all_tools(session)
        tasks.cancel_scope.cancel()
    return tools


async def _pump_out(process: Any, to_session: Any) -> None:
    """The server's stdout, line by line, as messages (or parse errors) for the session."""
    import mcp_types
    from anyio.streams.text import TextReceiveStream
    from mcp.shared.message import SessionMessage

    async with to_session:
        buffer = ""
        async for chunk in TextReceiveStream(process.stdout, errors="replace"):
            lines = (buffer + chunk).split("\n")
            buffer = lines.pop()
            for line in lines:
                try:
                    message: Any = SessionMessage(
                        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    )
                except ValueError as exc:
                    message = exc
                await to_session.send(message)


async def _pump_in(process: Any, to_server: Any) -> None:
    import anyio

    async with to_server:
        async for item in to_server:
            data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
            try:
                await process.stdin.send(data.encode())
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                return  # it stopped reading; _watch or the timeout says why


async def _watch(process: Any) -> None:
    """Raise _Exited when the leader exits (not process.wait(), which on asyncio also waits
    for its stdout to close, and a child it left may hold that open)."""
    import anyio

    while process.returncode is None:
        await anyio.sleep(0.02)
    raise _Exited(process.returncode)


async def _exit_of(process: Any) -> _Exited | None:
    """Why the session failed, when it was the server exiting: its exit code."""
    import anyio

    with anyio.move_on_after(EXIT_GRACE):
        while process.returncode is None:
            await anyio.sleep(0.02)
    return None if process.returncode is None else _Exited(process.returncode)


async def _stop(process: Any, group: procgroup.Group, answered: bool) -> None:
    """A server that answered gets its stdin closed and CLOSE_GRACE to exit by itself (a
    `docker run -i` removes its container then); then whatever is left of the group is
    stopped, and the leader reaped."""
    import anyio

    if answered:
        with anyio.move_on_after(CLOSE_GRACE):
            await process.stdin.aclose()
            while process.returncode is None:
                await anyio.sleep(0.02)
    await anyio.to_thread.run_sync(procgroup.stop, group)
    with anyio.move_on_after(procgroup.KILL_WAIT):
        await process.aclose()  # reaps the leader and closes our ends of its pipes


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
