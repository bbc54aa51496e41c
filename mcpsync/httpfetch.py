"""GET over HTTP with the rules every network seam of mcpsync follows: a timeout per request
(also against a trickling body), retries with exponential backoff and jitter on connection
errors, timeouts, 429 and 5xx (honouring `Retry-After`), a size cap on the decoded body, and a
bounded thread pool for batches. The MCP registry client (registry/http.py) and the artifact
stores (artifacts/) both sit on it; what a status or a body means is theirs to say.

Imported only when a network request is about to be made: it imports httpx.
"""

from __future__ import annotations

import email.utils
import random
import re
import ssl
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timezone
from http import HTTPStatus
from typing import Any, Protocol, TypeVar

from mcpsync import __version__, waiting
from mcpsync.errors import EnvFailure
from mcpsync.pool import concurrently

# httpx imports its command-line client (click, rich, pygments) whenever they are installed, as
# they are next to the mcp extra; mcpsync never runs it, and it cost 30-60 ms of every networked
# command's start-up. The other modules take httpx from here, so this line comes first.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
import httpx as httpx  # noqa: E402  (re-exported: the one place httpx is imported)

__all__ = ["Fetcher", "Reply", "Sink", "Transient", "concurrently", "httpx"]

T = TypeVar("T")
_SECONDS = re.compile(r"\d+(\.\d+)?")


class Transient(Exception):
    """An attempt failed in a way that retrying may cure. `reason` completes "<label> …"."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class Sink(Protocol):
    """Where a streamed body goes instead of memory (a hashlib object)."""

    def update(self, data: bytes, /) -> None: ...


@dataclass(frozen=True)
class Reply:
    status: int
    headers: httpx.Headers
    body: bytes  # empty when the body went to a sink
    size: int


BUDGET = 3  # one request, with its retries, takes at most this many timeouts


class Fetcher:
    """The retry loop around one httpx.Client per thread, each with its own keep-alive
    connection: httpcore's shared pool scans every connection and waiting request on each
    request and response, which made 100 requests in flight cost more CPU than they saved.
    The CA bundle is loaded once and its context shared by all of them.

    `retries` is how many times a failed attempt is tried again (so 1 + retries attempts), as
    long as the request, retries and backoff included, stays within BUDGET × `timeout`: a
    server that accepts connections and never answers fails in about 2 timeouts, not 5."""

    def __init__(
        self,
        *,
        timeout: float = 5.0,
        retries: int = 4,
        backoff: float = 0.25,
        max_backoff: float = 8.0,
        concurrency: int = 16,
        max_bytes: int = 16 * 1024 * 1024,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        verify: ssl.SSLContext | bool = True,
        auth: httpx.Auth | None = None,
    ) -> None:
        self.timeout = timeout
        self.budget = BUDGET * timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.concurrency = concurrency
        self.max_bytes = max_bytes
        self._count = 0
        self._lock = threading.Lock()
        self._options: dict[str, Any] = {
            "timeout": httpx.Timeout(timeout),
            "headers": {"User-Agent": f"mcpsync/{__version__}", **(headers or {})},
            "follow_redirects": True,
            "transport": transport,
            "verify": verify if isinstance(verify, ssl.SSLContext) else _context(verify),
            "auth": auth,
        }
        self._mine = threading.local()
        self._clients: list[httpx.Client] = []

    @property
    def request_count(self) -> int:
        with self._lock:
            return self._count

    def close(self) -> None:
        with self._lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.close()

    def _client(self) -> httpx.Client:
        """This thread's client (a thread makes one request at a time, so one connection)."""
        client: httpx.Client | None = getattr(self._mine, "client", None)
        if client is None:
            client = self._mine.client = httpx.Client(**self._options)
            with self._lock:
                self._clients.append(client)
        return client

    # --- the retry loop ---------------------------------------------------------------------

    def retrying(
        self,
        attempt: Callable[[], T],
        abort: threading.Event,
        *,
        failed: Callable[[str, int], EnvFailure],
    ) -> T:
        """attempt() until it returns, raises something other than Transient, or the retries
        (or the time budget for another attempt) run out; then `failed(reason, attempts)`."""
        tries = 0
        started = time.monotonic()
        while True:
            tries += 1
            try:
                return attempt()
            except Transient as failure:
                delay = self._delay(failure, tries)
                late = time.monotonic() - started + delay + self.timeout > self.budget
                if tries > self.retries or late or not _pause(delay, abort):
                    raise failed(failure.reason, tries) from None

    def _delay(self, failure: Transient, attempt: int) -> float:
        if failure.retry_after is not None:
            return min(self.max_backoff, failure.retry_after)
        # Exponential backoff with jitter, so many workers do not retry in lockstep.
        ceiling = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    # --- one attempt ------------------------------------------------------------------------

    def send(
        self,
        url: str,
        *,
        too_large: Callable[[], Exception],
        unusable: Callable[[str], Exception],
        headers: Mapping[str, str] | None = None,
        max_bytes: int | None = None,
        sink: Sink | None = None,
    ) -> Reply:
        """One GET. Network failures and 429/5xx raise Transient; any other status is returned.
        A body over the cap raises too_large(); a request that cannot work (a redirect loop,
        an unusable URL) raises unusable(reason)."""
        with self._lock:
            self._count += 1
        deadline = time.monotonic() + self.timeout
        cap = self.max_bytes if max_bytes is None else max_bytes
        host = _host(url)
        try:
            with (
                waiting.request(host, self.budget),
                self._client().stream("GET", url, headers=headers) as response,
            ):
                waiting.answered(host)
                body, size = _read(response, cap, deadline, too_large, sink)
        except httpx.TimeoutException:
            raise Transient(f"did not answer within {self.timeout} s") from None
        except httpx.ConnectError as exc:
            raise Transient(f"could not be reached: {text(exc)}") from None
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            raise Transient(f"broke off the response: {text(exc)}") from None
        except httpx.HTTPError as exc:  # redirect loops, unusable URLs: retrying cannot help
            raise unusable(text(exc)) from None
        status = response.status_code
        if status == 429 or status >= 500:
            wait = retry_after(response.headers.get("Retry-After"))
            raise Transient(answered(status, body), wait)
        return Reply(status, response.headers, body, size)


def _read(
    response: httpx.Response,
    cap: int,
    deadline: float,
    too_large: Callable[[], Exception],
    sink: Sink | None,
) -> tuple[bytes, int]:
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > cap:
        raise too_large()
    chunks: list[bytes] = []
    size = 0
    streaming = sink is not None and 200 <= response.status_code < 300
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > cap:  # decoded size: a small gzip body cannot blow up memory
            raise too_large()
        if time.monotonic() > deadline:  # a trickling answer must not outlast the timeout
            raise httpx.ReadTimeout("response too slow")
        if streaming:
            sink.update(chunk)  # type: ignore[union-attr]
        else:
            chunks.append(chunk)
    return b"".join(chunks), size


# --- helpers ----------------------------------------------------------------------------------


def _host(url: str) -> str:
    """host[:port] of a URL, never its credentials: what a "waiting for" line names."""
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).netloc.rpartition("@")[2] or url
    except ValueError:
        return "?"


def _pause(seconds: float, abort: threading.Event) -> bool:
    """Sleep before a retry; False if the batch was abandoned meanwhile."""
    return not abort.wait(seconds)


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP-date."""
    if not value:
        return None
    value = value.strip()
    if _SECONDS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # "-0000": HTTP-dates are GMT
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - time.time())


def answered(status: int, body: bytes) -> str:
    """ "answered 503 Service Unavailable: <the body's detail>", for a status message."""
    return f"answered {status} {phrase(status)}{detail(body)}"


def phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "(unknown status)"


def detail(body: bytes) -> str:
    """The `detail` of a problem+json body, if there is one worth a few words."""
    import json

    try:
        problem: Any = json.loads(body)
    except (ValueError, RecursionError):
        return ""
    said = problem.get("detail") if isinstance(problem, dict) else None
    if not isinstance(said, str) or not said.strip():
        return ""
    line = " ".join(said.split())
    return f": {line[:200]}"


def text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _context(verify: bool) -> ssl.SSLContext:
    """What httpx would build for `verify` (SSL_CERT_FILE / SSL_CERT_DIR honoured), once."""
    return httpx.create_ssl_context(verify=verify)


def tls_for(url: str) -> ssl.SSLContext | bool:
    """Certificate checks as usual for https; for a plain-http server (a local stand-in or
    mirror) skip loading the CA bundle, which costs 25-70 ms of start-up: a context with no
    trusted CAs still refuses any https redirect rather than trusting it."""
    if url.startswith("http://"):
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return True
