"""The MCP registry's v0.1 read API over HTTP.

One pooled httpx.Client shared by all threads; many lookups run on a bounded thread pool so a
lock of 100 servers costs a few round trips, not 100. Every failure ends as NotFound or one
RegistryError line naming the registry, the request and the attempts; a response that is cut,
malformed, oversized or of the wrong shape is an error, never a partial result.
"""

from __future__ import annotations

import email.utils
import json
import random
import re
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import timezone
from http import HTTPStatus
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import quote, urlencode, urlsplit

import httpx

from mcpsync import __version__
from mcpsync.errors import InputError, NotFound, RegistryError
from mcpsync.registry import parse_server_list, server_not_found, version_not_found
from mcpsync.registry.base import ServerEntry

API = "/v0.1/servers"
_PAGE_MAX = 100  # the live registry answers 422 above this
_SECONDS = re.compile(r"\d+(\.\d+)?")

T = TypeVar("T")
R = TypeVar("R")


class _Transient(Exception):
    """An attempt failed in a way that retrying may cure. `reason` completes "Registry URL …"."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class _Missing(Exception):
    """The registry answered 404; the caller knows whether a server or a version is missing."""


class HttpRegistry:
    """A Registry backed by a live v0.1 registry (or anything that speaks its read API).

    `retries` is how many times a failed request is tried again (so 1 + retries attempts)."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 5.0,
        retries: int = 4,
        backoff: float = 0.25,
        max_backoff: float = 8.0,
        concurrency: int = 16,
        max_bytes: int = 16 * 1024 * 1024,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        _check_settings(url, timeout, retries, concurrency, max_bytes)
        self.url = url
        self._base = url.rstrip("/")
        self._timeout = timeout
        self._retries = retries
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._concurrency = concurrency
        self._max_bytes = max_bytes
        self._count = 0
        self._count_lock = threading.Lock()
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout),
            # One connection per worker: the pool never makes a worker wait.
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
            headers={"User-Agent": f"mcpsync/{__version__}", "Accept": "application/json"},
            follow_redirects=True,
            transport=transport,
            verify=_tls_for(url),
        )

    # --- the Registry protocol --------------------------------------------------------------

    @property
    def request_count(self) -> int:
        with self._count_lock:
            return self._count

    def versions(self, name: str) -> list[ServerEntry]:
        return self._versions(name, threading.Event())

    def versions_many(self, names: Sequence[str]) -> dict[str, list[ServerEntry]]:
        unique = list(dict.fromkeys(names))
        return dict(zip(unique, self._concurrently(unique, self._versions), strict=True))

    def versions_or_missing(self, names: Sequence[str]) -> dict[str, list[ServerEntry] | NotFound]:
        unique = list(dict.fromkeys(names))
        found = self._concurrently(unique, self._versions_or_missing)
        return dict(zip(unique, found, strict=True))

    def get(self, name: str, version: str) -> ServerEntry:
        return self._get(name, version, threading.Event())

    def search(self, text: str, *, limit: int = 30, latest_only: bool = True) -> list[ServerEntry]:
        found: list[ServerEntry] = []
        seen: set[str] = set()
        cursor: str | None = None
        while len(found) < limit:
            page, cursor = self._page(text, min(_PAGE_MAX, limit - len(found)), latest_only, cursor)
            found.extend(entry for entry in page if entry.status != "deleted")
            if cursor is None or not page:
                break
            if cursor in seen:  # a registry that loops would otherwise keep us here forever
                raise RegistryError(f"Registry {self.url} repeated a page cursor (GET {API})")
            seen.add(cursor)
        return found[:limit]

    def search_many(
        self, texts: Sequence[str], *, limit: int = 30, latest_only: bool = True
    ) -> dict[str, list[ServerEntry]]:
        unique = list(dict.fromkeys(texts))

        def one(text: str, abort: threading.Event) -> list[ServerEntry]:
            return self.search(text, limit=limit, latest_only=latest_only)

        return dict(zip(unique, self._concurrently(unique, one), strict=True))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HttpRegistry:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- operations -------------------------------------------------------------------------

    def _versions(self, name: str, abort: threading.Event) -> list[ServerEntry]:
        target = f"{API}/{_segment(name)}/versions"
        try:
            data = self._get_json(target, abort)
        except _Missing:
            raise self._server_missing(name) from None
        entries = self._shaped(target, lambda: _own(parse_server_list(data), name))
        live = [entry for entry in entries if entry.status != "deleted"]
        if not live:  # as the live registry does when every version is deleted
            raise self._server_missing(name)
        return live

    def _versions_or_missing(
        self, name: str, abort: threading.Event
    ) -> list[ServerEntry] | NotFound:
        try:
            return self._versions(name, abort)
        except NotFound as missing:  # an answer about this name, not a reason to stop the rest
            return missing

    def _get(self, name: str, version: str, abort: threading.Event) -> ServerEntry:
        target = f"{API}/{_segment(name)}/versions/{_segment(version)}"
        try:
            data = self._get_json(target, abort)
        except _Missing:
            raise self._version_missing(name, version, abort) from None
        entry = self._shaped(
            target, lambda: _own([ServerEntry.from_response(data)], name, version)[0]
        )
        if entry.status == "deleted":
            raise self._version_missing(name, version, abort)
        return entry

    def _page(
        self, text: str, size: int, latest_only: bool, cursor: str | None
    ) -> tuple[list[ServerEntry], str | None]:
        params = {"limit": str(size)}
        if text:
            params["search"] = text
        if latest_only:
            params["version"] = "latest"
        if cursor is not None:
            params["cursor"] = cursor
        target = f"{API}?{urlencode(params, quote_via=quote)}"
        data = self._get_json(target, threading.Event())
        return self._shaped(target, lambda: (parse_server_list(data), _next_cursor(data)))

    def _concurrently(self, items: list[T], work: Callable[[T, threading.Event], R]) -> list[R]:
        """work() for every item on at most `concurrency` threads; the first failure in input
        order is raised (so the same inputs give the same error) and the rest are abandoned."""
        abort = threading.Event()
        if len(items) <= 1:
            return [work(item, abort) for item in items]
        workers = min(self._concurrency, len(items))
        with ThreadPoolExecutor(workers, thread_name_prefix="mcpsync-registry") as pool:
            futures = [pool.submit(work, item, abort) for item in items]
            try:
                return [future.result() for future in futures]
            except BaseException:
                abort.set()  # running lookups stop retrying; queued ones never start
                for future in futures:
                    future.cancel()
                raise

    # --- not found --------------------------------------------------------------------------

    def _server_missing(self, name: str) -> NotFound:
        return server_not_found(name, self.url)

    def _version_missing(self, name: str, version: str, abort: threading.Event) -> NotFound:
        # The registry's 404 does not say whether the server or the version is unknown.
        if version == "latest":
            return self._server_missing(name)
        try:
            known = self._versions(name, abort)
        except NotFound as missing:
            return missing
        except RegistryError:  # the 404 was definite; only the hint is lost
            known = []
        return version_not_found(name, version, self.url, known)

    # --- one GET, with retries --------------------------------------------------------------

    def _get_json(self, target: str, abort: threading.Event) -> Any:
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._attempt(target)
            except _Transient as failure:
                if attempt > self._retries or not _pause(self._delay(failure, attempt), abort):
                    raise RegistryError(
                        f"Registry {self.url} {failure.reason} (GET {target}, "
                        f"{attempt} attempt{'s' if attempt > 1 else ''})"
                    ) from None

    def _delay(self, failure: _Transient, attempt: int) -> float:
        if failure.retry_after is not None:
            return min(self._max_backoff, failure.retry_after)
        # Exponential backoff with jitter, so many workers do not retry in lockstep.
        ceiling = min(self._max_backoff, self._backoff * 2 ** (attempt - 1))
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def _attempt(self, target: str) -> Any:
        with self._count_lock:
            self._count += 1
        deadline = time.monotonic() + self._timeout
        try:
            with self._client.stream("GET", self._base + target) as response:
                body = self._read(response, target, deadline)
        except httpx.TimeoutException:
            raise _Transient(f"did not answer within {self._timeout} s") from None
        except httpx.ConnectError as exc:
            raise _Transient(f"could not be reached: {_text(exc)}") from None
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            raise _Transient(f"broke off the response: {_text(exc)}") from None
        except httpx.HTTPError as exc:  # redirect loops, unusable URLs: retrying cannot help
            raise RegistryError(f"Registry {self.url}: {_text(exc)} (GET {target})") from None
        self._check_status(response, body, target)
        return self._decode(body, target)

    def _read(self, response: httpx.Response, target: str, deadline: float) -> bytes:
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self._max_bytes:
            raise self._too_large(target)
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self._max_bytes:  # decoded size: a small gzip body cannot blow up memory
                raise self._too_large(target)
            if time.monotonic() > deadline:  # a trickling answer must not outlast the timeout
                raise httpx.ReadTimeout("response too slow")
            chunks.append(chunk)
        return b"".join(chunks)

    def _too_large(self, target: str) -> RegistryError:
        return RegistryError(
            f"Registry {self.url}: response larger than {self._max_bytes} bytes (GET {target})"
        )

    def _check_status(self, response: httpx.Response, body: bytes, target: str) -> None:
        status = response.status_code
        if 200 <= status < 300:
            return
        if status == 404:
            raise _Missing()
        said = f"answered {status} {_phrase(status)}{_detail(body)}"
        if status == 429 or status >= 500:
            raise _Transient(said, _retry_after(response.headers.get("Retry-After")))
        raise RegistryError(f"Registry {self.url} {said} (GET {target})")

    def _decode(self, body: bytes, target: str) -> Any:
        # Retried: a body cut short by a proxy is as transient as a dropped connection.
        try:
            return json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise _Transient(f"sent malformed JSON: {_text(exc)}") from None

    def _shaped(self, target: str, parse: Callable[[], T]) -> T:
        try:
            return parse()
        except ValueError as exc:
            raise RegistryError(
                f"Registry {self.url} sent an unexpected response (GET {target}): {exc}"
            ) from None


# --- helpers ----------------------------------------------------------------------------------


def _check_settings(url: str, timeout: float, retries: int, concurrency: int, size: int) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise InputError(f"Invalid registry URL {url!r}", hint="e.g. https://registry.example")
    if timeout <= 0 or retries < 0 or concurrency < 1 or size < 1:
        raise InputError(
            "Registry settings out of range: timeout > 0, retries >= 0, concurrency >= 1 "
            f"(got timeout={timeout}, retries={retries}, concurrency={concurrency})"
        )


def _segment(value: str) -> str:
    """A name or version as one path segment: `/` and `+` must not reach the path raw."""
    return quote(value, safe="")


def _own(entries: list[ServerEntry], name: str, version: str | None = None) -> list[ServerEntry]:
    """Refuse answers about another server (or version) than the one asked for."""
    for entry in entries:
        if entry.name != name or version not in (None, "latest", entry.version):
            raise ValueError(f"asked for {name!r}, got {entry.name!r} {entry.version!r}")
    return entries


def _next_cursor(data: dict[str, Any]) -> str | None:
    metadata = data.get("metadata") or {}
    cursor = metadata.get("nextCursor") if isinstance(metadata, dict) else None
    if cursor is not None and not isinstance(cursor, str):
        raise ValueError("'metadata.nextCursor' is not a string")
    return cursor or None  # the API documents an empty cursor as "no more results"


def _pause(seconds: float, abort: threading.Event) -> bool:
    """Sleep before a retry; False if the batch was abandoned meanwhile."""
    return not abort.wait(seconds)


def _retry_after(value: str | None) -> float | None:
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


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "(unknown status)"


def _detail(body: bytes) -> str:
    """The `detail` of a problem+json body, if there is one worth a few words."""
    try:
        problem = json.loads(body)
    except (ValueError, RecursionError):
        return ""
    detail = problem.get("detail") if isinstance(problem, dict) else None
    if not isinstance(detail, str) or not detail.strip():
        return ""
    line = " ".join(detail.split())
    return f": {line[:200]}"


def _text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _tls_for(url: str) -> ssl.SSLContext | bool:
    """Certificate checks as usual for https; for a plain-http registry (a local stand-in or
    mirror) skip loading the CA bundle, which costs 25-70 ms of start-up: a context with no
    trusted CAs still refuses any https redirect rather than trusting it."""
    if url.startswith("http://"):
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return True
