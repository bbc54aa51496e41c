"""Hostile sizes at full size, each `mcpsync` a real process: wall time and peak RSS.

    python bench/bench_hostile.py [--agent-mb 50] [--servers 10000] [--description-mb 10]
                                  [--versions 5000]

- a 50 MB agent.yaml: first sync, no-op sync, `sync --check` without stamps (a fresh clone);
- 10,000 servers in mcp.toml (a `file:` snapshot registry), into one agent.yaml and a project
  Cursor file: cold lock, no-op lock, `lock --check`, first sync, no-op sync;
- a 10 MB registry description (the stand-in over HTTP): lock, sync (agent + global config),
  and whether the lock and both files hold it exactly; two such versions (a 20 MB answer)
  against the 16 MiB response cap;
- 5,000 versions of one server: lock with a range, and the pin chosen.

Peak RSS is each process's own (wait4's ru_maxrss). Never fails; prints figures.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import yaml  # noqa: E402
from cli_helpers import load_toml  # noqa: E402
from registry_stub import RegistryStub, make_item, npm_package  # noqa: E402
from reliability import (  # noqa: E402
    GLOBAL_TARGET,
    Setup,
    big_agent,
    build,
    description,
    many_versions,
    measured,
)

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def run(setup: Setup, label: str, *args: str) -> None:
    m = measured(setup, *args)
    status = "ok" if m.code == 0 else f"exit {m.code}: {m.err.strip().splitlines()[0]}"
    print(f"  {label:<34} {m.seconds:7.2f} s  peak RSS {m.rss_mb:6.0f} MB  {status}")


def big_agent_yaml(base: Path, megabytes: float) -> None:
    target = '[[targets]]\nkind = "holodeck-agent"\npath = "agent.yaml"\n'
    setup = build(base, 3, 0, shared=target)
    size = len(big_agent(setup.proj / "agent.yaml", megabytes))
    print(f"agent.yaml of {size / 1e6:.0f} MB, 3 servers:")
    run(setup, "lock", "lock")
    run(setup, "sync (first)", "sync")
    run(setup, "sync (nothing to do)", "sync")
    shutil.rmtree(setup.state, ignore_errors=True)
    run(setup, "sync --check, no stamps", "sync", "--check")


def many_servers(base: Path, count: int) -> None:
    cursor = '[[targets]]\nkind = "cursor"\nscope = "project"\n'
    setup = build(base, count, 1, shared=cursor)
    print(f"{count} servers in mcp.toml (file: snapshot), into 1 agent.yaml + .cursor/mcp.json:")
    run(setup, "lock (cold)", "lock")
    run(setup, "lock (nothing to do)", "lock")
    run(setup, "lock --check", "lock", "--check")
    run(setup, "sync (first)", "sync")
    run(setup, "sync (nothing to do)", "sync")
    sizes = [(setup.proj / f).stat().st_size / 1e6 for f in ("mcp.lock", ".cursor/mcp.json")]
    print(f"  (mcp.lock {sizes[0]:.1f} MB, .cursor/mcp.json {sizes[1]:.1f} MB)")


def big_description(base: Path, megabytes: float) -> None:
    text = description(megabytes)
    name = "io.github.rel/server-000"

    def item(version: str, latest: bool) -> dict[str, object]:
        package = npm_package("@rel/server-000", version)
        return make_item(name, version, is_latest=latest, description=text, packages=[package])

    with RegistryStub([item("1.0.0", True)]) as stub:
        setup = build(base, 1, 1, registry=stub.url, shared=GLOBAL_TARGET)
        print(f"a {len(text.encode()) / 1e6:.0f} MB registry description (HTTP stand-in):")
        run(setup, "lock", "lock")
        run(setup, "sync (agent.yaml + global)", "sync")
        lock = load_toml((setup.proj / "mcp.lock").read_text())["server"][0]["description"]
        defused = text.replace("${HOME}", "$ {HOME}")
        agent = yaml.load((setup.proj / "agents/a000/agent.yaml").read_text(), Loader=LOADER)
        glob = yaml.load((setup.home / ".holodeck/config.yaml").read_text(), Loader=LOADER)
        exact = (
            lock == text
            and [t["description"] for t in agent["tools"] if t["name"] == "rel_000"] == [defused]
            and [e["description"] for e in glob["mcp_servers"] if e["name"] == "rel_000"]
            == [defused]
        )
        print(f"  written exactly in mcp.lock, agent.yaml and the global config: {exact}")
        stub.catalog.items = [item("1.0.0", False), item("1.1.0", True)]
        before = (setup.proj / "mcp.lock").read_bytes()
        run(setup, "lock -U, two such versions", "lock", "-U")
        print(f"  mcp.lock unchanged: {(setup.proj / 'mcp.lock').read_bytes() == before}")


def many_versions_of_one(base: Path, count: int) -> None:
    with RegistryStub(many_versions("io.github.rel/server-000", count)) as stub:
        setup = build(base, 1, 0, registry=stub.url)
        toml = setup.proj / "mcp.toml"
        toml.write_text(toml.read_text().replace('"^1"', '">=1.2.3,<2,!=1.9.99"'))
        print(f"{count} versions of one server (HTTP stand-in), constraint >=1.2.3,<2,!=1.9.99:")
        run(setup, "lock", "lock")
        pin = load_toml((setup.proj / "mcp.lock").read_text())["server"][0]["version"]
        print(f"  pinned {pin} (expected 1.9.98) with {stub.request_count} request(s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent-mb", type=float, default=50)
    parser.add_argument("--servers", type=int, default=10000)
    parser.add_argument("--description-mb", type=float, default=10)
    parser.add_argument("--versions", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcpsync-bench-hostile-") as tmp:
        big_agent_yaml(Path(tmp) / "agent", args.agent_mb)
        many_servers(Path(tmp) / "servers", args.servers)
        big_description(Path(tmp) / "description", args.description_mb)
        many_versions_of_one(Path(tmp) / "versions", args.versions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
