"""A forward proxy on 127.0.0.1 for the private-registry tests: CONNECT tunnels (https through
HTTPS_PROXY) and absolute-form requests (http through HTTP_PROXY), each relayed byte for byte.
It records what it was asked to reach; with `auth`, it answers 407 to a request without those
Basic credentials (and never relays them upstream). Nothing here imports mcpsync."""

from __future__ import annotations

import base64
import select
import socket
import socketserver
import threading
from types import TracebackType
from urllib.parse import urlsplit


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        client: socket.socket = self.request
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(65536)
            if not chunk:
                return
            head += chunk
        end = head.index(b"\r\n\r\n")
        top, body = head[:end], head[end + 4 :]
        line, *lines = top.split(b"\r\n")
        method, target, version = line.decode("latin-1").split(" ", 2)
        said = [h.split(b":", 1)[1].strip() for h in lines if _is_proxy_auth(h)]
        self.server.authorizations.append(said[0].decode("latin-1") if said else None)
        if self.server.auth is not None:
            wanted = b"Basic " + base64.b64encode(self.server.auth.encode())
            if said != [wanted]:
                client.sendall(
                    b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                    b'Proxy-Authenticate: Basic realm="stub"\r\nContent-Length: 0\r\n\r\n'
                )
                return
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            self.server.seen.append(f"CONNECT {target}")
            upstream = socket.create_connection((host, int(port)))
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            leftover = body
        else:
            parts = urlsplit(target)
            self.server.seen.append(f"{method} {target}")
            upstream = socket.create_connection((parts.hostname, parts.port or 80))
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            kept = b"".join(h + b"\r\n" for h in lines if not _is_proxy_auth(h))
            leftover = f"{method} {path} {version}\r\n".encode("latin-1") + kept + b"\r\n" + body
        with upstream:
            if leftover:
                upstream.sendall(leftover)
            _relay(client, upstream)


def _is_proxy_auth(header: bytes) -> bool:
    return header.lower().startswith(b"proxy-authorization:")


def _relay(a: socket.socket, b: socket.socket) -> None:
    while True:
        ready, _, _ = select.select([a, b], [], [], 5)
        if not ready:
            return
        for sock in ready:
            data = sock.recv(65536)
            if not data:
                return
            (b if sock is a else a).sendall(data)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    seen: list[str]
    auth: str | None
    authorizations: list[str | None]


class ProxyStub:
    """Use as a context manager; `.url` for HTTP(S)_PROXY, `.seen` the requests it relayed."""

    def __init__(self, auth: str | None = None) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.seen = []
        self._server.auth = auth  # "user:password" the proxy wants, or None
        self._server.authorizations = []  # the Proxy-Authorization each request carried
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def seen(self) -> list[str]:
        return self._server.seen

    @property
    def authorizations(self) -> list[str | None]:
        return self._server.authorizations

    def __enter__(self) -> ProxyStub:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
