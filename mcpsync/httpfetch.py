"""GET over HTTP with the rules every network seam of mcpsync follows: a timeout per request
(also against a trickling body), retries with exponential backoff and jitter on connection
errors, timeouts, 429 and 5xx (honouring `Retry-After`), a size cap on the decoded body, and a
bounded thread pool for batches. The MCP registry client (registry/http.py) and the artifact
stores (artifacts/) both sit on it; what a status or a body means is theirs to say.

It speaks HTTP through urllib3 (not httpx): a cold `lock` is CPU-bound, and urllib3 costs
0.56 ms of CPU a request at 100 in flight against httpx's 1.02 ms (bench/bench_http.py), and
about 40 ms less to import. Proxies (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY) are read
from the environment with the standard library's own rules, and a custom CA bundle
(SSL_CERT_FILE, SSL_CERT_DIR) is honoured, else certifi's.

Imported only when a network request is about to be made: it imports urllib3.
"""

from __future__ import annotations

import base64
import os
import random
import re
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from datetime import timezone
from http import HTTPStatus
from typing import Any, Protocol, TypeVar
from urllib.parse import unquote, urljoin, urlsplit

import urllib3
from msgspec import Struct
from urllib3 import exceptions as _u3

from mcpsync import __version__, waiting
from mcpsync.errors import EnvFailure
from mcpsync.pool import concurrently

__all__ = ["Fetcher", "Headers", "Reply", "Sink", "Transient", "concurrently"]

T = TypeVar("T")
_SECONDS = re.compile(r"\d+(\.\d+)?")
Headers = urllib3.HTTPHeaderDict  # case-insensitive, as HTTP header names are
MAX_REDIRECTS = 20


class Transient(Exception):
    """An attempt failed in a way that retrying may cure. `reason` completes "<label> …"."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class Sink(Protocol):
    """Where a streamed body goes instead of memory (a hashlib object)."""

    def update(self, data: bytes, /) -> None: ...


class Credentials(Protocol):
    """What to send as Authorization to one URL (None: nothing)."""

    def header_for(self, url: str) -> str | None: ...


class Reply(Struct, frozen=True):
    status: int
    headers: Headers
    body: bytes  # empty when the body went to a sink
    size: int


BUDGET = 3  # one request, with its retries, takes at most this many timeouts


class Fetcher:
    """The retry loop around one urllib3 pool manager (thread-safe; one keep-alive connection
    pool per host, `concurrency` connections each), or one per proxy the environment names.

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
        verify: ssl.SSLContext | bool = True,
        auth: Credentials | None = None,
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
        self._headers = {
            "User-Agent": f"mcpsync/{__version__}",
            "Accept-Encoding": "gzip, deflate",
            **(headers or {}),
        }
        self._auth = auth
        self._context = verify if isinstance(verify, ssl.SSLContext) else _trusted_context()
        self._proxies = _environment_proxies()
        self._managers: dict[str | None, urllib3.PoolManager] = {}
        self._pools: dict[str, urllib3.HTTPConnectionPool] = {}  # origin -> its direct pool
        # Built once: urllib3 copies a Retry as it counts, and never changes a Timeout.
        self._timeout = urllib3.Timeout(connect=timeout, read=timeout)
        # urllib3 retries nothing itself (the loop below does, within its budget); it follows
        # redirects, dropping Authorization on one to another host.
        self._redirects = urllib3.Retry(
            total=None,
            connect=0,
            read=0,
            status=0,
            other=0,
            redirect=MAX_REDIRECTS,
            raise_on_redirect=True,
            raise_on_status=False,
            respect_retry_after_header=False,
        )
        self._later_hops = self._redirects.new(redirect=MAX_REDIRECTS - 1)

    @property
    def request_count(self) -> int:
        with self._lock:
            return self._count

    def close(self) -> None:
        with self._lock:
            managers, self._managers, self._pools = self._managers, {}, {}
        for manager in managers.values():
            manager.clear()

    def _manager(self, proxy: str | None) -> urllib3.PoolManager:
        """The pool manager for URLs `proxy` serves (None: direct)."""
        with self._lock:
            found = self._managers.get(proxy)
            if found is None:
                options: dict[str, Any] = {
                    "num_pools": 64,
                    "maxsize": self.concurrency,
                    "ssl_context": self._context,
                }
                found = (
                    _proxy_manager(proxy, options)
                    if proxy is not None
                    else urllib3.PoolManager(**options)
                )
                self._managers[proxy] = found
            return found

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
        sent = {**self._headers, **(headers or {})}
        said = self._auth.header_for(url) if self._auth is not None else None
        if said is not None:
            sent["Authorization"] = said  # urllib3 drops it on a redirect to another origin
        try:
            with waiting.request(host, self.budget):
                response = self._open(url, sent)
                try:
                    waiting.answered(host)
                    body, size = _read(response, cap, deadline, too_large, sink)
                except BaseException:
                    response.close()  # a body left half-read must not go back to the pool
                    raise
                finally:
                    response.release_conn()
        except _TooSlow:
            raise Transient(f"did not answer within {self.timeout} s") from None
        except _u3.MaxRetryError as exc:
            raise _failure(exc.reason or exc, self.timeout, unusable) from None
        except _u3.HTTPError as exc:
            raise _failure(exc, self.timeout, unusable) from None
        status = response.status
        if status == 429 or status >= 500:
            wait = retry_after(response.headers.get("Retry-After"))
            raise Transient(answered(status, body), wait)
        return Reply(status, response.headers, body, size)

    def _open(self, url: str, headers: dict[str, str]) -> urllib3.BaseHTTPResponse:
        """The first hop straight on the origin's pool, as `PoolManager.request` would send it
        but without re-parsing the URL and re-finding the pool each time (0.60 -> 0.56 ms of
        CPU a request, bench/bench_http.py); a redirect is then followed by the manager. A
        proxied URL, or one with user info or characters to escape, goes by the manager."""
        origin, target = _origin_and_target(url)
        proxy = _proxy_for(url, self._proxies)
        if origin is None or proxy is not None:
            return self._via_manager(url, headers, self._redirects, proxy)
        response = self._pool(origin, url).urlopen(
            "GET",
            target,
            headers=headers,
            preload_content=False,
            release_conn=False,
            timeout=self._timeout,
            retries=self._redirects,
            redirect=False,
            assert_same_host=False,
        )
        location = response.get_redirect_location()
        if not location:
            return response
        response.drain_conn()
        response.release_conn()
        following = urljoin(url, location)
        if _origin_and_target(following)[0] != origin:  # as urllib3 does on a later hop
            headers = {k: v for k, v in headers.items() if k.lower() not in _CROSS_ORIGIN_DROP}
        proxy = _proxy_for(following, self._proxies)
        return self._via_manager(following, headers, self._later_hops, proxy)

    def _via_manager(
        self, url: str, headers: dict[str, str], retries: urllib3.Retry, proxy: str | None
    ) -> urllib3.BaseHTTPResponse:
        return self._manager(proxy).request(
            "GET",
            url,
            headers=headers,
            preload_content=False,
            timeout=self._timeout,
            retries=retries,
        )

    def _pool(self, origin: str, url: str) -> urllib3.HTTPConnectionPool:
        """The direct manager's pool for `origin`, kept at hand (urllib3 2 closes a pool only
        on `clear`, which `close` does with this dict emptied, not when it evicts one)."""
        with self._lock:
            found = self._pools.get(origin)
        if found is None:
            found = self._manager(None).connection_from_url(url)
            with self._lock:
                found = self._pools.setdefault(origin, found)
        return found


_CROSS_ORIGIN_DROP = frozenset(h.lower() for h in urllib3.Retry.DEFAULT_REMOVE_HEADERS_ON_REDIRECT)
# What urllib3 sends unchanged (no user info, no character it would escape, no dot segment it
# would remove): anything else takes the manager's way, so both send the same bytes.
_PLAIN_URL = re.compile(
    r"(https?://[A-Za-z0-9.:\[\]-]+)((?:[/?](?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-F]{2})*)?)\Z"
)


def _origin_and_target(url: str) -> tuple[str | None, str]:
    """("scheme://host[:port]", "/path?query") of a plain http(s) URL; (None, "") for one
    with user info or anything urllib3 would escape first."""
    found = _PLAIN_URL.match(url)
    if found is None or "/." in found.group(2):
        return None, ""
    target = found.group(2)
    return found.group(1).lower(), target if target.startswith("/") else "/" + target


class _TooSlow(Exception):
    """The body trickled in past the request's timeout."""


def _failure(exc: BaseException, timeout: float, unusable: Callable[[str], Exception]) -> Exception:
    """A urllib3 failure as Transient (retrying may cure it) or unusable(reason)."""
    # NewConnectionError is a ConnectTimeoutError in urllib3's tree: ask for it first.
    if isinstance(exc, (_u3.NewConnectionError, _u3.SSLError, _u3.ProxyError)):
        return Transient(f"could not be reached: {_cause(exc)}")
    if isinstance(exc, _u3.TimeoutError):
        return Transient(f"did not answer within {timeout} s")
    if isinstance(exc, (_u3.ProtocolError, _u3.IncompleteRead)):
        return Transient(f"broke off the response: {_cause(exc)}")
    if isinstance(exc, _u3.ResponseError):  # the one counter urllib3 may exhaust: redirects
        return unusable(f"Exceeded maximum allowed redirects ({MAX_REDIRECTS}).")
    return unusable(text(exc))


def _cause(exc: BaseException) -> str:
    """The message of the OSError under a urllib3 wrapper ("[Errno 111] Connection refused"),
    not urllib3's own prefix with the connection object's repr."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and not isinstance(seen, _u3.HTTPError):
            return text(seen)
        seen = seen.__cause__ or seen.__context__
    return text(exc)


def _read(
    response: urllib3.BaseHTTPResponse,
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
    streaming = sink is not None and 200 <= response.status < 300
    for chunk in response.stream(64 * 1024, decode_content=True):
        size += len(chunk)
        if size > cap:  # decoded size: a small gzip body cannot blow up memory
            raise too_large()
        if time.monotonic() > deadline:  # a trickling answer must not outlast the timeout
            raise _TooSlow()
        if streaming:
            sink.update(chunk)  # type: ignore[union-attr]
        else:
            chunks.append(chunk)
    return b"".join(chunks), size


# --- helpers ----------------------------------------------------------------------------------


def _host(url: str) -> str:
    """host[:port] of a URL, never its credentials: what a "waiting for" line names."""
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
    import email.utils  # here: only an HTTP-date needs it (5 ms of every networked start)

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


def _trusted_context() -> ssl.SSLContext:
    """The CA bundle to trust: SSL_CERT_FILE or SSL_CERT_DIR when set (as curl, pip and uv
    read them), else certifi's (a dependency)."""
    file, folder = os.environ.get("SSL_CERT_FILE", ""), os.environ.get("SSL_CERT_DIR", "")
    if file and os.path.isfile(file):
        return ssl.create_default_context(cafile=file)
    if folder and os.path.isdir(folder):
        return ssl.create_default_context(capath=folder)
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def basic_credential(user: str, password: str) -> str:
    """An Authorization (or Proxy-Authorization) value for HTTP Basic auth."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def split_login(url: str) -> tuple[str, str | None]:
    """`url` without its `user:password@`, and those as a Basic credential (None without):
    a URL's login goes in a header, never on the wire or into a message as part of the URL."""
    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    bare = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
    return bare, basic_credential(unquote(parts.username), unquote(parts.password or ""))


def _environment_proxies() -> dict[str, str]:
    if not any(name.lower().endswith("_proxy") for name in os.environ):
        return {}  # nothing to read: urllib.request (5 ms to import) is not needed
    from urllib.request import getproxies_environment

    return getproxies_environment()


def _proxy_for(url: str, proxies: Mapping[str, str]) -> str | None:
    """The proxy for `url`: its scheme's (HTTPS_PROXY, HTTP_PROXY), else ALL_PROXY, unless
    NO_PROXY names its host."""
    parts = urlsplit(url)
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy:
        return None
    import urllib.request

    # The environment's NO_PROXY rule (proxy_bypass would ask macOS's or Windows' settings).
    bypass: Callable[[str, dict[str, str]], bool]
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    if bypass(parts.netloc, dict(proxies)):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def _proxy_manager(proxy: str, options: dict[str, Any]) -> urllib3.ProxyManager:
    """Through `proxy`; a user and password in its URL (`http://user:pass@proxy:3128`, as
    curl and pip take them) go as Proxy-Authorization, and nowhere else."""
    bare, login = split_login(proxy)
    headers = {"Proxy-Authorization": login} if login is not None else None
    return urllib3.ProxyManager(bare, proxy_headers=headers, **options)


def tls_for(url: str) -> ssl.SSLContext | bool:
    """Certificate checks as usual for https; for a plain-http server (a local stand-in or
    mirror) skip loading the CA bundle, which costs 25-70 ms of start-up: a context with no
    trusted CAs still refuses any https redirect rather than trusting it."""
    if url.startswith("http://"):
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return True
