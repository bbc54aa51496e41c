"""A real npm registry on 127.0.0.1 for tests: Verdaccio (from the npm registry, pinned,
installed once into .cache/verdaccio), started on a free port with its own storage, no
uplinks (nothing is proxied from outside), publishing open to anyone.

Also the packages the tree tests publish: `tiny-dep` (exports the string "dep VERSION") and
`tiny-mcp-server`, a minimal MCP stdio server (initialize, tools/list, ping) depending on
`tiny-dep@^1.0.0`; its one tool's description is the dep's string, and it appends that string
to $TINY_MCP_LOG when it starts. `tiny-mcp-server --which` prints it and exits.

    python tests/npm_registry.py start DIR         # start one (it keeps running), publish
                                                   # tiny-dep 1.0.0 and tiny-mcp-server 1.0.0;
                                                   # prints {"url", "pid", "storage"}
    python tests/npm_registry.py dep URL DIR VERSION   # publish tiny-dep VERSION to it
    python tests/npm_registry.py install               # install Verdaccio into .cache only
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

VERDACCIO = "verdaccio@6.8.0"
REPO = Path(__file__).resolve().parent.parent
INSTALL = Path(os.environ.get("MCPSYNC_VERDACCIO_DIR") or REPO / ".cache" / "verdaccio")

CONFIG = """\
storage: {storage}
auth:
  htpasswd:
    file: {storage}/htpasswd
    max_users: -1
uplinks: {{}}
packages:
  '**':
    access: $all
    publish: $anonymous
    unpublish: $anonymous
log: {{type: stdout, format: pretty, level: error}}
"""

SERVER_JS = r"""#!/usr/bin/env node
const dep = require("tiny-dep");
if (process.argv.includes("--which")) { console.log(dep); process.exit(0); }
if (process.env.TINY_MCP_LOG) require("fs").appendFileSync(process.env.TINY_MCP_LOG, dep + "\n");
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
let buf = "";
process.stdin.on("data", (chunk) => {
  buf += chunk;
  let i;
  while ((i = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, i).trim(); buf = buf.slice(i + 1);
    if (!line) continue;
    const msg = JSON.parse(line);
    if (msg.id === undefined) continue;
    let result = {};
    if (msg.method === "initialize") {
      result = { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} },
                 serverInfo: { name: "tiny-mcp-server", version: "1.0.0" } };
    } else if (msg.method === "tools/list") {
      result = { tools: [{ name: "which_dep", description: dep,
                           inputSchema: { type: "object", properties: {} } }] };
    } else if (msg.method !== "ping") {
      send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "no such method" } });
      continue;
    }
    send({ jsonrpc: "2.0", id: msg.id, result });
  }
});
process.stdin.on("end", () => process.exit(0));
"""


def installed() -> Path:
    """Verdaccio's bin, installed into the cache first if it is not there."""
    bin_path = INSTALL / "node_modules" / ".bin" / "verdaccio"
    if not bin_path.exists():
        INSTALL.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(INSTALL),
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                VERDACCIO,
            ],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return bin_path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Registry:
    """One running Verdaccio: `url`, `storage`, `publish(directory)`, `stop()`."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.storage = base / "storage"
        self.storage.mkdir(parents=True, exist_ok=True)
        (base / "config.yaml").write_text(CONFIG.format(storage=self.storage), "utf-8")
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/"
        self.log = open(base / "verdaccio.log", "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [
                str(installed()),
                "--config",
                str(base / "config.yaml"),
                "--listen",
                f"127.0.0.1:{port}",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._wait()
        self.npmrc = base / "publish.npmrc"  # any token: publishing is open
        self.npmrc.write_text(f"//127.0.0.1:{port}/:_authToken=test\n", "utf-8")

    def _wait(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError((self.base / "verdaccio.log").read_text("utf-8", "replace"))
            try:
                with urllib.request.urlopen(self.url + "-/ping", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("verdaccio did not answer in 60 s")

    def publish(self, directory: Path) -> None:
        subprocess.run(
            [
                "npm",
                "publish",
                "--registry",
                self.url,
                "--userconfig",
                str(self.npmrc),
                "--loglevel=error",
                "--no-update-notifier",
            ],
            cwd=directory,
            check=True,
            capture_output=True,
            timeout=120,
        )

    def tarball(self, name: str, version: str) -> Path:
        return self.storage / name / f"{name}-{version}.tgz"

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            self.process.wait(10)
        self.log.close()


def dep_package(root: Path, version: str, name: str = "tiny-dep") -> Path:
    out = root / f"{name}-{version}"
    out.mkdir(parents=True, exist_ok=True)
    _package(out, {"name": name, "version": version, "main": "index.js"})
    (out / "index.js").write_text(f'module.exports = "dep {version}";\n', "utf-8")
    return out


def server_package(
    root: Path,
    version: str = "1.0.0",
    name: str = "tiny-mcp-server",
    dep: str = "tiny-dep",
    more: dict[str, str] | None = None,
) -> Path:
    """The server package; `more`: further dependencies (name -> range) it declares."""
    out = root / f"{name}-{version}"
    out.mkdir(parents=True, exist_ok=True)
    _package(
        out,
        {
            "name": name,
            "version": version,
            "bin": {name: "server.js"},
            "dependencies": {dep: "^1.0.0", **(more or {})},
        },
    )
    (out / "server.js").write_text(SERVER_JS.replace('"tiny-dep"', json.dumps(dep)), "utf-8")
    (out / "server.js").chmod(0o755)
    return out


def _package(directory: Path, manifest: dict[str, object]) -> None:
    (directory / "package.json").write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")


def server_json(name: str = "tiny-mcp-server", version: str = "1.0.0") -> dict[str, object]:
    """The MCP registry's server.json for the server package (for a file: snapshot)."""
    return {
        "name": f"io.example/{name}",
        "version": version,
        "description": "A tiny MCP server",
        "packages": [
            {
                "registryType": "npm",
                "identifier": name,
                "version": version,
                "transport": {"type": "stdio"},
            }
        ],
    }


def publish_to(url: str, directory: Path) -> None:
    npmrc = directory / ".npmrc"
    npmrc.write_text(f"//{url.split('://', 1)[1]}:_authToken=test\n", "utf-8")
    subprocess.run(
        ["npm", "publish", "--registry", url, "--loglevel=error", "--no-update-notifier"],
        cwd=directory,
        check=True,
        capture_output=True,
        timeout=120,
    )


def main(argv: list[str]) -> None:
    if argv[:1] == ["install"]:
        print(installed())
        return
    if argv[:1] == ["dep"]:
        url, base, version = argv[1:4]
        publish_to(url, dep_package(Path(base), version))
        return
    base = Path(argv[1])
    registry = Registry(base)
    registry.publish(dep_package(base / "src", "1.0.0"))
    registry.publish(server_package(base / "src"))
    found = {"url": registry.url, "pid": registry.process.pid, "storage": str(registry.storage)}
    print(json.dumps(found), flush=True)


if __name__ == "__main__":
    if shutil.which("npm") is None:
        sys.exit("npm is needed")
    main(sys.argv[1:])
