"""Stand-ins for the artifact stores, as one real HTTP server on 127.0.0.1: an npm registry
(with a token-protected scoped registry), a PyPI Simple index (PEP 691 JSON or PEP 503 HTML),
an OCI registry with the bearer-token challenge, and a file host for mcpb bundles.
Nothing here imports mcpsync.

    with ArtifactStub() as store:
        store.npm["@acme/weather"] = {"1.0.0": "sha512-..."}
        env = store.env()      # npm_config_registry, UV_INDEX_URL pointing here
        ... store.requests ...

Paths: /npm/<name>/<version> and /private/<name>/<version> (npm; /private/ wants
`Authorization: Bearer <private_token>`), /simple/<project>/ (index), /v2/<repo>/manifests/<tag>
and /token (OCI), /files/<name> (bundles).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

OCI_TOKEN = "anonymous-pull-token"
MANIFEST_TYPE = "application/vnd.oci.image.index.v1+json"


def manifest_bytes(repository: str, tag: str) -> bytes:
    """A small, stable image index body for repository:tag (what the stand-in serves)."""
    body = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "manifests": [],
        "x": f"{repository}:{tag}",
    }
    return json.dumps(body, sort_keys=True).encode()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ArtifactStub:
    def __init__(self) -> None:
        self.npm: dict[str, dict[str, str]] = {}  # name -> version -> integrity
        self.npm_tags: dict[str, dict[str, str]] = {}  # name -> dist-tag ("latest") -> version
        self.private: dict[str, dict[str, str]] = {}  # served under /private/, token required
        self.private_token = "s3cr3t-npm-token"
        self.pypi: dict[str, list[str]] = {}  # project -> filenames
        self.yanked: set[str] = set()  # filenames the index marks yanked (PEP 592/691)
        self.html_only = False  # the index speaks PEP 503 HTML only
        self.images: dict[str, set[str]] = {}  # repository -> tags
        self.anonymous = False  # the OCI registry serves images without a token
        self.wrong_digest_header = False  # send a Docker-Content-Digest that is not the body's
        self.files: dict[str, bytes] = {}  # /files/<name> -> bytes
        self.latency = 0.0
        self.requests: list[str] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    def __enter__(self) -> ArtifactStub:
        handler = type("Handler", (_Handler,), {"stub": self})
        self._server = _Server(("127.0.0.1", 0), handler)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def host(self) -> str:
        assert self._server is not None
        return f"127.0.0.1:{self._server.server_address[1]}"

    @property
    def url(self) -> str:
        return f"http://{self.host}"

    def env(self) -> dict[str, str]:
        """The environment that points npx's and uvx's stores here."""
        return {"npm_config_registry": f"{self.url}/npm/", "UV_INDEX_URL": f"{self.url}/simple"}

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def reset_counts(self) -> None:
        with self._lock:
            self.requests.clear()
            self.headers.clear()

    def _record(self, path: str, headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(path)
            self.headers.append(headers)

    # --- answers --------------------------------------------------------------------------------

    def answer(self, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(path)
        segments = [unquote(s) for s in parts.path.split("/")[1:]]
        route = segments[0] if segments else ""
        if route in ("npm", "private"):
            return self._npm(route, segments[1:], headers)
        if route == "simple":
            return self._simple(segments[1], headers)
        if route == "v2":
            return self._manifest(parts.path, headers)
        if route == "token":
            return self._token(parse_qs(parts.query))
        if route == "files" and segments[1] in self.files:
            return 200, {"Content-Type": "application/zip"}, self.files[segments[1]]
        return 404, {}, b'{"error": "not found"}'

    def _npm(
        self, route: str, rest: list[str], headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        catalog = self.npm if route == "npm" else self.private
        if route == "private" and headers.get("authorization") != f"Bearer {self.private_token}":
            return 401, {}, b'{"error": "authentication required"}'
        name, version = "/".join(rest[:-1]), rest[-1]
        version = self.npm_tags.get(name, {}).get(version, version)  # GET /<name>/<dist-tag>
        integrity = catalog.get(name, {}).get(version)
        if integrity is None:
            return 404, {}, b'{"error": "version not found"}'
        tarball = f"{self.url}/{route}/{name}/-/{name.rsplit('/', 1)[-1]}-{version}.tgz"
        body = {
            "name": name,
            "version": version,
            "dist": {"integrity": integrity, "tarball": tarball},
        }
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()

    def _simple(self, project: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        names = self.pypi.get(project)
        if names is None:
            return 404, {}, b"not found"
        wants_json = "application/vnd.pypi.simple.v1+json" in headers.get("accept", "")
        if wants_json and not self.html_only:
            files = [
                {
                    "filename": n,
                    "url": f"{self.url}/files/{n}",
                    "hashes": {"sha256": sha256(n.encode())},
                    "yanked": "broken build" if n in self.yanked else False,
                }
                for n in names
            ]
            body = json.dumps({"meta": {"api-version": "1.1"}, "name": project, "files": files})
            return 200, {"Content-Type": "application/vnd.pypi.simple.v1+json"}, body.encode()
        yank = ' data-yanked=""'
        links = "".join(
            f'<a href="../../files/{n}#sha256={sha256(n.encode())}"'
            f"{yank if n in self.yanked else ''}>{n}</a><br/>"
            for n in names
        )
        return 200, {"Content-Type": "text/html"}, f"<html><body>{links}</body></html>".encode()

    def _manifest(self, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        repository, _, tag = path[len("/v2/") :].partition("/manifests/")
        if not self.anonymous and headers.get("authorization") != f"Bearer {OCI_TOKEN}":
            challenge = (
                f'Bearer realm="{self.url}/token",service="stub-registry",'
                f'scope="repository:{repository}:pull"'
            )
            return 401, {"WWW-Authenticate": challenge}, b'{"errors": [{"code": "UNAUTHORIZED"}]}'
        if tag not in self.images.get(repository, set()):
            return 404, {}, b'{"errors": [{"code": "MANIFEST_UNKNOWN"}]}'
        body = manifest_bytes(repository, tag)
        declared = "sha256:" + sha256(body + (b"x" if self.wrong_digest_header else b""))
        return 200, {"Content-Type": MANIFEST_TYPE, "Docker-Content-Digest": declared}, body

    def _token(self, query: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        if query.get("service") != ["stub-registry"] or not query.get("scope"):
            return 400, {}, b'{"error": "bad token request"}'
        return 200, {"Content-Type": "application/json"}, json.dumps({"token": OCI_TOKEN}).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 drops concurrent connects: 1 s SYN retries

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that hang up early (size caps, timeouts) are part of the tests


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    stub: ArtifactStub

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.stub._record(self.path, headers)
        if self.stub.latency:
            time.sleep(self.stub.latency)
        status, extra, body = self.stub.answer(self.path, headers)
        self.send_response(status)
        for key, value in extra.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
