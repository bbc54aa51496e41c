"""Client CPU per request at many requests in flight: mcpsync's HTTP seam (httpfetch.Fetcher,
on urllib3) against urllib3 alone, against httpx with a client per thread (what the seam was
built on before) and against the standard library's http.client, the floor of any Python
HTTP/1.1 client. The figures behind the choice of urllib3 (docs/design/decisions.md).

    python bench/bench_http.py [--requests 200] [--threads 100] [--latency 0.05] [--runs 5]

Each mode runs in a fresh process against the registry stand-in (TCP_NODELAY, keep-alive; in
this process); the child measures its own CPU (user + system) from after its imports to its
last answer. The first `--threads` requests each open a connection, as a cold `lock` does (one
per server and host); later ones may reuse them.
Prints figures; never fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import registry_stub  # noqa: E402  (the stand-in lives with the tests)
from registry_stub import RegistryStub, make_item, npm_package  # noqa: E402

CHILD = r"""
import json, resource, sys, threading, time
sys.modules["httpx._main"] = None  # httpx's CLI (click, rich): not part of a request
mode, base, count, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
path = "/v0.1/servers/io.github.bench%2Fserver-{:03d}/versions"
urls = [base + path.format(i % 100) for i in range(count)]
from concurrent.futures import ThreadPoolExecutor
mine = threading.local()  # what a thread keeps between its requests
if mode == "fetcher":
    from mcpsync.httpfetch import Fetcher, tls_for
    fetcher = Fetcher(verify=tls_for(base), concurrency=threads)
    def get(url):
        fetcher.send(url, too_large=RuntimeError, unusable=RuntimeError)
elif mode == "httpx":
    import ssl, httpx
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    def get(url):  # what mcpsync did before: an httpx client per thread
        if not hasattr(mine, "client"):
            mine.client = httpx.Client(verify=context)
        with mine.client.stream("GET", url) as response:
            response.read()
elif mode == "urllib3":
    import urllib3
    manager = urllib3.PoolManager(maxsize=threads)
    def get(url):
        response = manager.request("GET", url, preload_content=False, retries=False)
        for _ in response.stream(65536):
            pass
        response.release_conn()
else:
    import http.client
    from urllib.parse import urlsplit
    def get(url):  # a connection per thread
        parts = urlsplit(url)
        if not hasattr(mine, "conn"):
            mine.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
        mine.conn.request("GET", parts.path)
        mine.conn.getresponse().read()
def cpu():
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime
started, wall = cpu(), time.perf_counter()
with ThreadPoolExecutor(threads) as pool:
    list(pool.map(get, urls))
print(json.dumps({"cpu": cpu() - started, "wall": time.perf_counter() - wall}))
"""

MODES = {
    "httpx": "httpx, a client per thread (mcpsync before)",
    "fetcher": "mcpsync's Fetcher (urllib3, with its rules)",
    "urllib3": "urllib3 alone (one pool manager)",
    "stdlib": "http.client, a connection per thread (the floor)",
}


def run_mode(mode: str, url: str, requests: int, threads: int) -> dict[str, float]:
    argv = [sys.executable, "-c", CHILD, mode, url, str(requests), str(threads)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--threads", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    registry_stub._Handler.disable_nagle_algorithm = True  # type: ignore[attr-defined]
    items = [
        make_item(
            f"io.github.bench/server-{i:03d}",
            "1.0.0",
            is_latest=True,
            published_at="2025-06-01T12:00:00Z",
            packages=[npm_package(f"@bench/server-{i:03d}", "1.0.0")],
        )
        for i in range(100)
    ]
    load = os.getloadavg()[0]
    print(
        f"{args.requests} requests, {args.threads} threads, {args.latency * 1000:.0f} ms a "
        f"request, {args.runs} runs (medians); {os.cpu_count()} CPUs, load {load:.2f}"
    )
    floor = None
    with RegistryStub(items) as stub:
        stub.faults.latency = args.latency
        for mode, label in reversed(MODES.items()):  # the floor first, for the ratios
            runs = [run_mode(mode, stub.url, args.requests, args.threads) for _ in range(args.runs)]
            per = statistics.median(r["cpu"] for r in runs) / args.requests * 1000
            wall = statistics.median(r["wall"] for r in runs)
            floor = floor or per
            print(
                f"  {label:48s} {per:5.2f} ms CPU a request ({per / floor:4.1f}x), "
                f"{wall:5.2f} s wall"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
