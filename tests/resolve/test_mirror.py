"""`mcpsync mirror DIR`: a file: snapshot from which an offline lock equals the registry's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_helpers import load_toml, run_cli, write_project
from registry_stub import RegistryStub, sample_items

SERVERS = (
    '[servers.weather]\nname = "io.github.example/weather"\nversion = "^1.2"\n\n'
    '[servers.beta]\nname = "io.github.example/weather"\nversion = "latest"\n\n'
    '[servers.notes]\nname = "io.github.example/notes"\nvariables = { dir = "/n" }\n\n'
    '[servers.postgres]\nname = "io.github.example/postgres"\n\n'
    '[servers.search]\nname = "com.example/search"\n\n'
    '[servers.local]\ncommand = "uvx"\nargs = ["local-mcp==1.0"]\n'
)


def _without_registry(lock_text: str) -> list[dict[str, object]]:
    servers = load_toml(lock_text)["server"]
    for server in servers:
        server.pop("registry", None)
    return servers


def test_lock_from_the_mirror_equals_lock_from_the_registry(tmp_path: Path) -> None:
    online = write_project(tmp_path / "online", SERVERS)
    offline = tmp_path / "offline"
    with RegistryStub(sample_items()) as stub:
        env = {"MCPSYNC_REGISTRY": stub.url}
        assert run_cli("lock", cwd=online, env=env).code == 0
        mirrored = run_cli("mirror", str(tmp_path / "mirror"), "--json", cwd=online, env=env)
        assert mirrored.code == 0, mirrored
        again = run_cli("mirror", str(tmp_path / "mirror"), "--json", cwd=online, env=env)
    report = {row["name"]: row for row in mirrored.json()["servers"]}
    # ^1.2 allows 1.2.0, 1.10.0 and 1.10.1; "latest" keeps 2.0.0-beta.1; 1.0.0 is left out
    assert report["io.github.example/weather"] == {
        "name": "io.github.example/weather",
        "versions": ["1.10.1", "2.0.0-beta.1", "1.10.0", "1.2.0"],
        "available": 5,
    }
    assert mirrored.json()["written"] is True and again.json()["written"] is False

    shutil.copytree(online, offline)
    (offline / "mcp.lock").unlink()
    offline_env = {"MCPSYNC_REGISTRY": f"file://{tmp_path / 'mirror'}"}
    assert run_cli("lock", cwd=offline, env=offline_env).code == 0  # the stub is gone
    online_lock = (online / "mcp.lock").read_text()
    offline_lock = (offline / "mcp.lock").read_text()
    assert _without_registry(offline_lock) == _without_registry(online_lock)
    assert offline_lock == online_lock.replace(stub.url, f"file://{tmp_path / 'mirror'}")


def test_mirror_is_deterministic_and_keeps_the_registry_meta(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", SERVERS)
    with RegistryStub(sample_items()) as stub:
        env = {"MCPSYNC_REGISTRY": stub.url}
        assert run_cli("mirror", "m1", cwd=project, env=env).code == 0
        assert run_cli("mirror", "m2", "--all-versions", cwd=project, env=env).code == 0
    first = (project / "m1" / "servers.json").read_text()
    items = json.loads(first)["servers"]
    names = [(i["server"]["name"], i["server"]["version"]) for i in items]
    assert names == sorted(names)
    beta = next(i for i in items if i["server"]["version"] == "2.0.0-beta.1")
    assert beta["_meta"]["io.modelcontextprotocol.registry/official"]["isLatest"] is True
    every = json.loads((project / "m2" / "servers.json").read_text())["servers"]
    weather = [i for i in every if i["server"]["name"] == "io.github.example/weather"]
    assert len(weather) == 5  # every live version (1.1.0 is deleted)
