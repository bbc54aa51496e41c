"""A forward proxy on 127.0.0.1 for the private-registry tests: CONNECT tunnels (https through
HTTPS_PROXY) and absolute-form requests (http through HTTP_PROXY), each relayed byte for byte.
It records what it was asked to reach. Nothing here imports mcpsync."""

from __future__ import annotations

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
        line, _, rest = head.partition(b"\r\n")
        method, target, version = line.decode("latin-1").split(" ", 2)
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            self.server.seen.append(f"CONNECT {target}")
            upstream = socket.create_connection((host, int(port)))
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            leftover = rest.partition(b"\r\n\r\n")[2]
        else:
            parts = urlsplit(target)
            self.server.seen.append(f"{method} {target}")
            upstream = socket.create_connection((parts.hostname, parts.port or 80))
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            leftover = f"{method} {path} {version}\r\n".encode("latin-1") + rest
        with upstream:
            if leftover:
                upstream.sendall(leftover)
            _relay(client, upstream)


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


class ProxyStub:
    """Use as a context manager; `.url` for HTTP(S)_PROXY, `.seen` the requests it relayed."""

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.seen = []
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
