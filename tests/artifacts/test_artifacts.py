"""Artifact digests at lock time, against real HTTP stand-ins on 127.0.0.1: the MCP registry
(tests/registry_stub.py) and the npm registry, PyPI index, OCI registry and bundle host
(tests/artifact_stubs.py)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from artifact_stubs import ArtifactStub, manifest_bytes, sha256
from cli_helpers import (
    Result,
    age,
    assert_clean_failure,
    load_toml,
    lock_bytes,
    run_cli,
    run_process,
    write_project,
)
from registry_stub import RegistryStub, make_item, npm_package

BUNDLE = b"PK\x03\x04 a tiny mcpb bundle"
NPM_SRI = "sha512-" + "A" * 86 + "=="
WHEEL = "acme_notes-1.0.0-py3-none-any.whl"
SDIST = "acme_notes-1.0.0.tar.gz"


@pytest.fixture
def store() -> Iterator[ArtifactStub]:
    with ArtifactStub() as stub:
        stub.npm["@acme/weather"] = {"1.2.0": NPM_SRI}
        stub.pypi["acme-notes"] = [WHEEL, SDIST, "acme_notes-0.9.0.tar.gz", "other-1.0.0.tar.gz"]
        stub.images["acme/postgres-mcp"] = {"3.1.0"}
        stub.files["b.mcpb"] = BUNDLE
        yield stub


def items(store: ArtifactStub, *, bundle_sha: str | None = None) -> list[dict[str, Any]]:
    pypi = {"registryType": "pypi", "identifier": "acme-notes", "version": "1.0.0"}
    oci = {"registryType": "oci", "identifier": f"{store.host}/acme/postgres-mcp:3.1.0"}
    mcpb = {
        "registryType": "mcpb",
        "identifier": f"{store.url}/files/b.mcpb",
        "version": "1.0.0",
        "fileSha256": bundle_sha or sha256(BUNDLE),
    }
    out = [
        make_item(
            "io.github.acme/weather",
            "1.2.0",
            is_latest=True,
            packages=[npm_package("@acme/weather", "1.2.0")],
        )
    ]
    for name, package in (("notes", pypi), ("postgres", oci), ("bundle", mcpb)):
        package = {**package, "transport": {"type": "stdio"}}
        out.append(make_item(f"io.github.acme/{name}", "1.0.0", is_latest=True, packages=[package]))
    return out


TOML = "".join(
    f'[servers.{alias}]\nname = "io.github.acme/{alias}"\n\n'
    for alias in ("bundle", "notes", "postgres", "weather")
)


@pytest.fixture
def registry(store: ArtifactStub) -> Iterator[RegistryStub]:
    with RegistryStub(items(store)) as stub:
        yield stub


def lock(registry: RegistryStub, store: ArtifactStub, root: Path, *args: str, **env: str) -> Result:
    # MCPSYNC_ARTIFACTS unset: the default for an http(s) registry, which is on.
    environment = {**store.env(), "MCPSYNC_ARTIFACTS": "", "HOME": str(root.parent), **env}
    return run_cli(
        "--registry", registry.url, "--timeout", "2", "-C", root, "lock", *args, env=environment
    )


def server(root: Path, alias: str) -> dict[str, Any]:
    data = load_toml(lock_bytes(root).decode())
    return next(s for s in data["server"] if s["alias"] == alias)


def test_lock_records_each_kind_with_how_it_was_obtained(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    root = write_project(tmp_path / "p", TOML)
    result = lock(registry, store, root)
    assert result.code == 0, result
    manifest = "sha256:" + sha256(manifest_bytes("acme/postgres-mcp", "3.1.0"))
    text = lock_bytes(root).decode()
    assert (
        '[server.artifact]\nsource = "npm-registry"\n'
        f'store = "{store.url}/npm"\ndigest = "{NPM_SRI}"\n'
    ) in text
    assert server(root, "notes")["artifact"] == {
        "source": "pypi-index",
        "store": f"{store.url}/simple",
        "files": {
            SDIST: "sha256:" + sha256(SDIST.encode()),
            WHEEL: "sha256:" + sha256(WHEEL.encode()),
        },
    }
    assert server(root, "postgres")["artifact"] == {
        "source": "downloaded-and-hashed",
        "store": store.url,
        "digest": manifest,
    }
    # docker runs exactly the manifest that was hashed
    image = f"{store.host}/acme/postgres-mcp:3.1.0@{manifest}"
    assert server(root, "postgres")["launch"]["args"] == ["run", "-i", "--rm", image]
    assert server(root, "bundle")["artifact"] == {
        "source": "downloaded-and-hashed",
        "store": f"{store.url}/files/b.mcpb",
        "digest": "sha256:" + sha256(BUNDLE),
    }
    # the OCI token was fetched once, anonymously, and used
    assert [r for r in store.requests if r.startswith("/token")] == [
        "/token?service=stub-registry&scope=repository%3Aacme%2Fpostgres-mcp%3Apull"
    ]


def test_same_inputs_same_bytes_and_the_noop_lock_asks_nobody(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    first = write_project(tmp_path / "a", TOML)
    second = write_project(tmp_path / "b", TOML)
    assert lock(registry, store, first).code == 0
    assert lock(registry, store, second).code == 0
    assert lock_bytes(first) == lock_bytes(second)
    mtime = age(first / "mcp.lock")
    registry.reset_counts()
    store.reset_counts()
    again = lock(registry, store, first)
    assert again.code == 0, again
    assert (registry.request_count, store.request_count) == (0, 0)
    assert (first / "mcp.lock").stat().st_mtime_ns == mtime


def test_scoped_registry_and_token_from_npmrc_never_leak(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    store.private["@acme/weather"] = {"1.2.0": "sha512-private=="}
    root = write_project(tmp_path / "p", TOML)
    (root / ".npmrc").write_text(
        f"@acme:registry={store.url}/private/\n//{store.host}/private/:_authToken=${{NPM_TOKEN}}\n"
    )
    result = lock(registry, store, root, NPM_TOKEN=store.private_token)
    assert result.code == 0, result
    assert server(root, "weather")["artifact"]["digest"] == "sha512-private=="
    assert server(root, "weather")["artifact"]["store"] == f"{store.url}/private"
    sent = [
        h for r, h in zip(store.requests, store.headers, strict=True) if r.startswith("/private/")
    ]
    assert [h["authorization"] for h in sent] == [f"Bearer {store.private_token}"]
    # the token went only to the registry it is for
    others = [
        h
        for r, h in zip(store.requests, store.headers, strict=True)
        if not r.startswith("/private/")
    ]
    assert all(store.private_token not in str(h) for h in others)
    assert store.private_token not in lock_bytes(root).decode() + result.out + result.err


def test_a_refused_token_is_exit_3_naming_the_server_without_the_token(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    root = write_project(tmp_path / "p", TOML)
    (root / ".npmrc").write_text(f"@acme:registry={store.url}/private/\n")
    result = lock(registry, store, root)
    line = assert_clean_failure(result, 3, "Server 'weather'", "401 Unauthorized")
    assert f"npm registry {store.url}/private" in line
    assert "_authToken" in result.err  # the hint says where a token goes
    assert not (root / "mcp.lock").exists()


def test_unreachable_store_is_exit_3_with_the_opt_out_hint_and_opt_out_works(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpsync.artifacts.session import Session

    monkeypatch.setitem(Session.__init__.__kwdefaults__, "backoff", 0.005)
    root = write_project(tmp_path / "p", TOML)
    assert lock(registry, store, root).code == 0
    before = lock_bytes(root)
    store.stop()
    # a new version whose digest cannot be had: the lock fails, as it cannot pin its bytes
    registry.add(
        make_item(
            "io.github.acme/weather", "1.3.0", packages=[npm_package("@acme/weather", "1.3.0")]
        )
    )
    (root / "mcp.toml").write_text(TOML.replace('weather"\n', 'weather"\nversion = "^1"\n'))
    result = lock(registry, store, root, "--upgrade")
    assert_clean_failure(result, 3, "could not be reached", "attempts")
    assert "--no-artifacts" in result.err_lines[1]
    assert "`artifacts = false` in [servers.weather]" in result.err_lines[1]
    assert lock_bytes(root) == before
    skipped = lock(registry, store, root, "--upgrade", "--no-artifacts")
    assert skipped.code == 0, skipped
    # the versions that did not change keep their records; the new one says why it has none
    assert server(root, "weather")["version"] == "1.3.0"
    assert "artifact" not in server(root, "weather")
    assert server(root, "weather")["no-artifact"] == "artifacts-off"
    assert all("artifact" in server(root, a) for a in ("bundle", "notes", "postgres"))
    assert f"{store.host}/acme/postgres-mcp:3.1.0@sha256:" in lock_bytes(root).decode()


def test_manifest_setting_opts_out_and_file_registries_default_off(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    root = write_project(tmp_path / "p", "[lock]\nartifacts = false\n\n" + TOML)
    assert lock(registry, store, root).code == 0
    assert store.request_count == 0
    assert "[server.artifact]" not in lock_bytes(root).decode()
    bad = write_project(tmp_path / "bad", '[lock]\nartifacts = "no"\n')
    assert_clean_failure(lock(registry, store, bad), 2, "[lock] artifacts must be true or false")


def test_backfill_adds_records_to_an_old_lock_without_moving_pins(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    root = write_project(tmp_path / "p", TOML)
    assert lock(registry, store, root, "--no-artifacts").code == 0
    registry.add(
        make_item(
            "io.github.acme/weather", "1.3.0", packages=[npm_package("@acme/weather", "1.3.0")]
        )
    )
    result = lock(registry, store, root)
    assert result.code == 0, result
    assert server(root, "weather")["version"] == "1.2.0"
    assert server(root, "weather")["artifact"]["digest"] == NPM_SRI
    assert "Changed weather 1.2.0 (artifact digests recorded)" in result.err_lines


def test_mcpb_bundle_that_does_not_match_is_refused(tmp_path: Path, store: ArtifactStub) -> None:
    with RegistryStub(items(store, bundle_sha="0" * 64)) as registry:
        root = write_project(tmp_path / "p", '[servers.bundle]\nname = "io.github.acme/bundle"\n')
        result = lock(registry, store, root)
    line = assert_clean_failure(result, 2, "Server 'bundle'", "refusing it")
    assert sha256(BUNDLE) in line and "0" * 64 in line
    assert not (root / "mcp.lock").exists()


def test_oci_digest_header_that_disagrees_with_the_bytes_is_refused(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    store.wrong_digest_header = True
    root = write_project(tmp_path / "p", '[servers.postgres]\nname = "io.github.acme/postgres"\n')
    assert_clean_failure(lock(registry, store, root), 3, "Server 'postgres'", "declares sha256:")


def test_missing_version_in_the_store_is_exit_2(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    store.npm.clear()
    root = write_project(tmp_path / "p", '[servers.weather]\nname = "io.github.acme/weather"\n')
    assert_clean_failure(
        lock(registry, store, root), 2, "npm package '@acme/weather' version 1.2.0"
    )


def test_html_only_index(tmp_path: Path, registry: RegistryStub, store: ArtifactStub) -> None:
    store.html_only = True
    root = write_project(tmp_path / "p", '[servers.notes]\nname = "io.github.acme/notes"\n')
    assert lock(registry, store, root).code == 0
    assert sorted(server(root, "notes")["artifact"]["files"]) == sorted([SDIST, WHEEL])


def test_artifacts_with_a_file_registry_when_asked(tmp_path: Path, store: ArtifactStub) -> None:
    import json

    root = write_project(tmp_path / "p", '[registry]\nurl = "file:reg"\n\n' + TOML)
    (root / "reg").mkdir()
    (root / "reg" / "servers.json").write_text(json.dumps({"servers": items(store)}))
    env = {**store.env(), "MCPSYNC_ARTIFACTS": "", "HOME": str(tmp_path)}
    assert run_cli("-C", root, "lock", env=env).code == 0
    assert store.request_count == 0  # a snapshot registry: off unless asked
    assert run_cli("-C", root, "lock", "--artifacts", env=env).code == 0
    assert server(root, "weather")["artifact"]["digest"] == NPM_SRI


def test_check_reports_drift_for_verify(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    from mcpsync.artifacts import StoreSettings, check_many
    from mcpsync.lock import lockfile

    root = write_project(tmp_path / "p", TOML)
    assert lock(registry, store, root).code == 0
    entries = lockfile.loads(lock_bytes(root).decode(), root / "mcp.lock").servers
    settings = StoreSettings(root, {**store.env(), "HOME": str(tmp_path)})
    assert check_many(entries, settings) == []
    store.npm["@acme/weather"]["1.2.0"] = "sha512-republished=="
    store.files["b.mcpb"] = b"swapped"
    drifts = check_many(entries, settings)
    assert [(d.alias, d.locked, d.found) for d in drifts] == [
        ("bundle", "sha256:" + sha256(BUNDLE), "sha256:" + hashlib.sha256(b"swapped").hexdigest()),
        ("weather", NPM_SRI, "sha512-republished=="),
    ]


def test_a_real_process_keeps_tokens_out_of_output(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    root = write_project(tmp_path / "p", TOML)
    (root / ".npmrc").write_text(
        f"@acme:registry={store.url}/private/\n//{store.host}/private/:_authToken=wrong-token\n"
    )
    env = {**store.env(), "MCPSYNC_ARTIFACTS": "1", "HOME": str(tmp_path)}
    result = run_process("--registry", registry.url, "-C", root, "lock", "--json", env=env)
    assert result.code == 3 and "wrong-token" not in result.out + result.err, result


@pytest.mark.parametrize(
    ("identifier", "base", "repository", "tag", "digest"),
    [
        (
            "docker.io/library/alpine:3.20",
            "https://registry-1.docker.io",
            "library/alpine",
            "3.20",
            None,
        ),
        ("docker.io/alpine", "https://registry-1.docker.io", "library/alpine", "9.9", None),
        ("signoz/mcp:1.0", "https://registry-1.docker.io", "signoz/mcp", "1.0", None),
        ("ghcr.io/o/x:v1", "https://ghcr.io", "o/x", "v1", None),
        ("localhost:5000/o/x", "http://localhost:5000", "o/x", "9.9", None),
        ("ghcr.io/o/x@sha256:" + "a" * 64, "https://ghcr.io", "o/x", None, "sha256:" + "a" * 64),
    ],
)
def test_image_references(
    identifier: str, base: str, repository: str, tag: str | None, digest: str | None
) -> None:
    from mcpsync.artifacts.oci import parse_reference

    ref = parse_reference(identifier, "9.9")
    assert (ref.base, ref.repository, ref.tag, ref.digest) == (base, repository, tag, digest)


def test_npm_config_layers_and_token_match(tmp_path: Path) -> None:
    from mcpsync.artifacts.model import StoreSettings
    from mcpsync.artifacts.npm import load_config, registry_for, token_for

    home = tmp_path / "home"
    home.mkdir()
    (home / ".npmrc").write_text(
        "registry=https://user.example/\n@a:registry=https://a.example/npm/\n"
        "//a.example/:_authToken=short\n//a.example/npm/:_authToken=${TOKEN}\n"
    )
    (tmp_path / ".npmrc").write_text("; project\nregistry = https://project.example/\n")
    settings = StoreSettings(tmp_path, {"HOME": str(home), "TOKEN": "long"})
    config = load_config(settings)
    assert registry_for("plain", None, config) == "https://project.example/"
    assert registry_for("plain", "https://flag.example", config) == "https://flag.example"
    assert registry_for("@a/x", "https://flag.example", config) == "https://a.example/npm/"
    assert token_for("https://a.example/npm/", config) == "long"
    assert token_for("https://a.example/other/", config) == "short"
    assert token_for("https://b.example/npm/", config) is None
    env = {"HOME": str(home), "npm_config_registry": "https://env.example/"}
    assert registry_for("plain", None, load_config(StoreSettings(tmp_path, env))) == (
        "https://env.example/"
    )


def test_index_precedence(tmp_path: Path) -> None:
    from mcpsync.artifacts.model import StoreSettings
    from mcpsync.artifacts.pypi import index_for

    def index(flag: str | None = None, **env: str) -> str:
        return index_for(flag, StoreSettings(tmp_path, env))

    assert index() == "https://pypi.org/simple"
    assert index(PIP_INDEX_URL="https://pip.example/simple/") == "https://pip.example/simple"
    assert index(PIP_INDEX_URL="https://p", UV_INDEX_URL="https://u") == "https://u"
    assert index(UV_INDEX_URL="https://u", UV_DEFAULT_INDEX="https://d") == "https://d"
    assert index("https://flag/simple", UV_DEFAULT_INDEX="https://d") == "https://flag/simple"


def test_a_malformed_artifact_table_is_named(tmp_path: Path) -> None:
    from mcpsync.errors import InputError
    from mcpsync.lock import lockfile

    text = (
        'version = 1\n\n[[server]]\nalias = "a"\n\n[server.launch]\ntransport = "stdio"\n\n'
        '[server.artifact]\nsource = "trust-me"\nstore = "https://x"\n'
    )
    with pytest.raises(InputError, match="server 'a': `artifact.source` must be one of"):
        lockfile.loads(text, tmp_path / "mcp.lock")


def test_lock_check_is_stale_while_an_older_lock_says_nothing_of_its_digests(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    import re

    root = write_project(tmp_path / "p", TOML)
    assert lock(registry, store, root, "--no-artifacts").code == 0
    # what an mcpsync before `no-artifact` wrote: no record, and no word on why
    older = re.sub(r"^no-artifact = .*\n", "", lock_bytes(root).decode(), flags=re.M)
    (root / "mcp.lock").write_text(older)
    stale = lock(registry, store, root, "--check")
    assert stale.code == 1, stale
    assert "  - server 'weather': no artifact digest recorded" in stale.err_lines
    assert lock(registry, store, root, "--check", "--no-artifacts").code == 0
    assert lock(registry, store, root).code == 0
    assert lock(registry, store, root, "--check").code == 0


def test_a_registry_that_challenged_once_gets_tokens_up_front(
    tmp_path: Path, store: ArtifactStub
) -> None:
    from mcpsync.artifacts import StoreSettings, Wanted, lookup_many

    store.images["acme/b"] = {"2"}
    pairs = [
        (alias, Wanted("oci", f"{store.host}/acme/{repo}", tag))
        for alias, repo, tag in (("a", "postgres-mcp", "3.1.0"), ("b", "b", "2"))
    ]
    found = lookup_many(pairs, StoreSettings(tmp_path, own_cache(tmp_path), concurrency=1))
    assert found["b"].digest == "sha256:" + sha256(manifest_bytes("acme/b", "2"))
    assert [r.split("?")[0] for r in store.requests] == [
        "/v2/acme/postgres-mcp/manifests/3.1.0",  # 401: the challenge
        "/token",
        "/v2/acme/postgres-mcp/manifests/3.1.0",
        "/token",  # the second image: no 401 round trip
        "/v2/acme/b/manifests/2",
    ]


def test_images_looked_up_at_once_on_one_registry_are_challenged_once(
    tmp_path: Path, store: ArtifactStub
) -> None:
    """The first lookup to a registry learns its challenge; the others, started meanwhile,
    wait for it instead of each taking a 401 (12 images made 12 401s before, 1 now)."""
    from mcpsync.artifacts import StoreSettings, Wanted, lookup_many

    store.latency = 0.05  # every lookup starts before the first answer lands
    repos = [f"acme/img-{i}" for i in range(12)]
    for repo in repos:
        store.images[repo] = {"1.0"}
    pairs = [(repo, Wanted("oci", f"{store.host}/{repo}", "1.0")) for repo in repos]
    found = lookup_many(pairs, StoreSettings(tmp_path, own_cache(tmp_path), concurrency=12))
    for repo in repos:
        assert found[repo].digest == "sha256:" + sha256(manifest_bytes(repo, "1.0"))
    paths = [r.split("?")[0] for r in store.requests]
    assert paths.count("/token") == 12
    assert len(paths) == 1 + 12 + 12, paths  # one 401, then a token and a manifest each


def test_a_registry_that_serves_images_anonymously_is_asked_once_without_a_token(
    tmp_path: Path, store: ArtifactStub
) -> None:
    from mcpsync.artifacts import StoreSettings, Wanted, lookup_many

    store.anonymous = True
    store.latency = 0.05
    repos = [f"acme/open-{i}" for i in range(6)]
    for repo in repos:
        store.images[repo] = {"2"}
    pairs = [(repo, Wanted("oci", f"{store.host}/{repo}", "2")) for repo in repos]
    found = lookup_many(pairs, StoreSettings(tmp_path, own_cache(tmp_path), concurrency=6))
    assert {found[r].digest for r in repos} == {
        "sha256:" + sha256(manifest_bytes(r, "2")) for r in repos
    }
    assert sorted(store.requests) == sorted(f"/v2/{r}/manifests/2" for r in repos)


def own_cache(tmp_path: Path) -> dict[str, str]:
    """An environment whose mcpsync cache (the OCI challenges learnt) is this test's own."""
    return {"MCPSYNC_CACHE_DIR": str(tmp_path / "cache")}


def _lookup_oci(store: ArtifactStub, env: dict[str, str], root: Path, *repos: str) -> list[str]:
    """Look the images up in one run (one session); the request paths it made, in order."""
    from mcpsync.artifacts import StoreSettings, Wanted, lookup_many

    store.reset_counts()
    pairs = [(repo, Wanted("oci", f"{store.host}/{repo}", "1.0")) for repo in repos]
    found = lookup_many(pairs, StoreSettings(root, env, concurrency=1))
    for repo in repos:
        assert found[repo].digest == "sha256:" + sha256(manifest_bytes(repo, "1.0"))
    return [r.split("?")[0] for r in store.requests]


def _memory(env: dict[str, str]) -> dict[str, Any]:
    import json

    path = Path(env["MCPSYNC_CACHE_DIR"]) / "oci-challenges.json"
    return json.loads(path.read_text())["registries"]  # type: ignore[no-any-return]


def test_a_later_run_asks_a_remembered_registry_for_its_token_straight_away(
    tmp_path: Path, store: ArtifactStub
) -> None:
    """The challenge one lock learns is remembered in the cache: the next lock of the same
    registry skips the 401 round trip (3 requests for the first image, then 2)."""
    store.images.update({"acme/a": {"1.0"}, "acme/b": {"1.0"}})
    env = own_cache(tmp_path)
    first = _lookup_oci(store, env, tmp_path, "acme/a")
    assert first == ["/v2/acme/a/manifests/1.0", "/token", "/v2/acme/a/manifests/1.0"]
    remembered = _memory(env)[store.url]
    assert remembered["challenge"].startswith(f'Bearer realm="{store.url}/token"')
    assert abs(remembered["learnt"] - time.time()) < 60
    assert _lookup_oci(store, env, tmp_path, "acme/b") == ["/token", "/v2/acme/b/manifests/1.0"]
    # another cache (another machine, a cleaned one) learns it again
    again = _lookup_oci(store, own_cache(tmp_path / "other"), tmp_path, "acme/b")
    assert again == ["/v2/acme/b/manifests/1.0", "/token", "/v2/acme/b/manifests/1.0"]


def test_a_remembered_challenge_that_no_longer_works_is_learnt_again(
    tmp_path: Path, store: ArtifactStub
) -> None:
    """A remembered token service that now refuses (404: moved) costs that one request; the
    registry's fresh challenge is then learnt, used and remembered in its place."""
    import json

    store.images["acme/a"] = {"1.0"}
    env = own_cache(tmp_path)
    moved = f'Bearer realm="{store.url}/old-token",service="stub-registry"'
    memory = Path(env["MCPSYNC_CACHE_DIR"]) / "oci-challenges.json"
    memory.parent.mkdir(parents=True)
    entry = {"challenge": moved, "learnt": int(time.time()) - 60}
    memory.write_text(json.dumps({"version": 1, "registries": {store.url: entry}}))
    assert _lookup_oci(store, env, tmp_path, "acme/a") == [
        "/old-token",  # refused
        "/v2/acme/a/manifests/1.0",  # 401: the fresh challenge
        "/token",
        "/v2/acme/a/manifests/1.0",
    ]
    assert _memory(env)[store.url]["challenge"].startswith(f'Bearer realm="{store.url}/token"')
    assert _lookup_oci(store, env, tmp_path, "acme/a") == ["/token", "/v2/acme/a/manifests/1.0"]


def test_a_registry_remembered_as_anonymous_that_now_challenges_is_answered(
    tmp_path: Path, store: ArtifactStub
) -> None:
    store.images["acme/a"] = {"1.0"}
    store.anonymous = True
    env = own_cache(tmp_path)
    assert _lookup_oci(store, env, tmp_path, "acme/a") == ["/v2/acme/a/manifests/1.0"]
    assert _memory(env)[store.url]["challenge"] is None
    store.anonymous = False  # the registry now wants a token
    assert _lookup_oci(store, env, tmp_path, "acme/a") == [
        "/v2/acme/a/manifests/1.0",
        "/token",
        "/v2/acme/a/manifests/1.0",
    ]
    assert _memory(env)[store.url]["challenge"].startswith("Bearer realm=")


@pytest.mark.parametrize(
    "memory",
    [
        "not json at all {",
        '{"version": 1, "registries": []}',
        '{"version": 1, "registries": {"URL": {"challenge": "Basic realm=x", "learnt": NOW}}}',
        '{"version": 1, "registries": {"URL": {"challenge": 7, "learnt": NOW}}}',
        '{"version": 1, "registries": {"URL": {"challenge": "CHALLENGE", "learnt": "today"}}}',
        '{"version": 1, "registries": {"URL": {"challenge": "CHALLENGE", "learnt": WEEK_AGO}}}',
        '{"version": 1, "registries": {"URL": {"challenge": "CHALLENGE", "learnt": TOMORROW}}}',
    ],
    ids=["garbage", "list", "not-bearer", "not-text", "no-time", "a-week-old", "future"],
)
def test_a_memory_that_is_malformed_or_old_is_ignored_and_replaced(
    tmp_path: Path, store: ArtifactStub, memory: str
) -> None:
    store.images["acme/a"] = {"1.0"}
    env = own_cache(tmp_path)
    now = int(time.time())
    challenge = f'Bearer realm=\\"{store.url}/token\\",service=\\"stub-registry\\"'
    text = (
        memory.replace("URL", store.url)
        .replace("CHALLENGE", challenge)
        .replace("WEEK_AGO", str(now - 7 * 24 * 3600 - 5))
        .replace("TOMORROW", str(now + 24 * 3600))
        .replace("NOW", str(now))
    )
    path = Path(env["MCPSYNC_CACHE_DIR"]) / "oci-challenges.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    paths = _lookup_oci(store, env, tmp_path, "acme/a")
    assert paths == ["/v2/acme/a/manifests/1.0", "/token", "/v2/acme/a/manifests/1.0"]
    assert _memory(env)[store.url]["challenge"].startswith("Bearer realm=")


def test_a_cache_that_cannot_be_written_costs_only_the_round_trip(
    tmp_path: Path, store: ArtifactStub
) -> None:
    store.images["acme/a"] = {"1.0"}
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    env = {"MCPSYNC_CACHE_DIR": str(blocker / "cache")}
    for _ in range(2):  # nothing remembered, nothing failed
        paths = _lookup_oci(store, env, tmp_path, "acme/a")
        assert paths == ["/v2/acme/a/manifests/1.0", "/token", "/v2/acme/a/manifests/1.0"]


def test_a_bad_artifacts_variable_is_exit_2(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", "")
    result = run_cli("-C", root, "lock", env={"MCPSYNC_ARTIFACTS": "maybe"})
    assert_clean_failure(result, 2, "MCPSYNC_ARTIFACTS='maybe' is not a yes/no value")


def test_warnings_still_come_in_alias_order_from_the_pipelined_lock(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    root = write_project(
        tmp_path / "p",
        TOML.replace('weather"\n', 'weather"\nvariables = { wx = "1" }\n').replace(
            'notes"\n', 'notes"\nvariables = { nx = "1" }\n'
        ),
    )
    result = lock(registry, store, root)
    assert result.code == 0, result
    warned = [
        line.split("`variables` key ")[1][:4] for line in result.err_lines if "warning:" in line
    ]
    assert warned == ["'nx'", "'wx'"]
    assert server(root, "weather")["artifact"]["digest"] == NPM_SRI


def test_index_credentials_go_as_basic_auth_and_are_never_recorded(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    root = write_project(tmp_path / "p", '[servers.notes]\nname = "io.github.acme/notes"\n')
    index = f"http://bot:pa%40ss@{store.host}/simple"
    result = lock(registry, store, root, UV_INDEX_URL=index)
    assert result.code == 0, result
    assert store.headers[-1]["authorization"] == "Basic Ym90OnBhQHNz"  # bot:pa@ss
    assert server(root, "notes")["artifact"]["store"] == f"{store.url}/simple"
    assert "pa%40ss" not in lock_bytes(root).decode() + result.err


def test_a_bundle_over_the_size_cap_is_exit_3(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mcpsync.artifacts.mcpb.BUNDLE_MAX", 8)
    root = write_project(tmp_path / "p", '[servers.bundle]\nname = "io.github.acme/bundle"\n')
    result = lock(registry, store, root)
    assert_clean_failure(result, 3, "Server 'bundle'", "response larger than 8 bytes")


def test_store_and_registry_failures_are_listed_together(
    tmp_path: Path, registry: RegistryStub, store: ArtifactStub
) -> None:
    store.npm.clear()  # weather's package is not in its store
    toml = TOML + '[servers.ghost]\nname = "io.github.acme/ghost"\n'
    root = write_project(tmp_path / "p", toml)
    result = lock(registry, store, root)
    assert result.code == 2, result
    lines = result.err_lines
    assert lines[0] == "error: mcp.toml: 2 servers cannot be locked; mcp.lock was not changed:"
    assert lines[1].startswith("  ghost: ") and "not found in registry" in lines[1]
    assert lines[2] == (
        f"  weather: npm registry {store.url}/npm has no npm package '@acme/weather' version 1.2.0"
    )
    assert not (root / "mcp.lock").exists()
