"""Tamper evidence with artifact digests (real HTTP stand-ins for the registry and the stores):
a lock made with artifacts on is intact for `lock --check` and `sync`; the image digest in an OCI
launch must agree with its [server.artifact] record, so an edit of either is caught, and `lock`
repairs it by looking the image up again; other artifact records are facts from a store that
only an online look-up can question."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from artifact_stubs import ArtifactStub, manifest_bytes, sha256
from cli_helpers import Result, load_toml, lock_bytes, run_cli, write_project
from msgspec.structs import replace
from project_helpers import age, snapshot
from registry_stub import RegistryStub, make_item, npm_package

from mcpsync.lock import lockfile

NPM_SRI = "sha512-" + "A" * 86 + "=="
FORGED_SRI = "sha512-" + "B" * 86 + "=="
FORGED = "sha256:" + "0" * 64
TOML = (
    '[servers.postgres]\nname = "io.github.acme/postgres"\n\n'
    '[servers.weather]\nname = "io.github.acme/weather"\n\n'
    '[[targets]]\nkind = "claude-code"\n'
)


@dataclass
class Project:
    root: Path
    registry: RegistryStub
    store: ArtifactStub
    env: dict[str, str]
    lock: bytes = b""

    def run(self, *args: str) -> Result:
        return run_cli("--registry", self.registry.url, "-C", self.root, *args, env=self.env)

    def edit_lock(self, old: str, new: str) -> None:
        text = (self.root / "mcp.lock").read_text(encoding="utf-8")
        assert text.count(old) == 1, old
        (self.root / "mcp.lock").write_text(text.replace(old, new), encoding="utf-8")

    def entry(self, alias: str) -> dict[str, object]:
        data = load_toml(lock_bytes(self.root).decode())
        return next(s for s in data["server"] if s["alias"] == alias)

    def reset_counts(self) -> None:
        self.registry.reset_counts()
        self.store.reset_counts()


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    with ArtifactStub() as store:
        store.npm["@acme/weather"] = {"1.2.0": NPM_SRI}
        store.images["acme/postgres-mcp"] = {"3.1.0"}
        oci = {
            "registryType": "oci",
            "identifier": f"{store.host}/acme/postgres-mcp:3.1.0",
            "transport": {"type": "stdio"},
        }
        items = [
            make_item("io.github.acme/postgres", "1.0.0", is_latest=True, packages=[oci]),
            make_item(
                "io.github.acme/weather",
                "1.2.0",
                is_latest=True,
                packages=[npm_package("@acme/weather", "1.2.0")],
            ),
        ]
        with RegistryStub(items) as registry:
            env = {
                **store.env(),
                "MCPSYNC_ARTIFACTS": "",  # the default for an http(s) registry: on
                "HOME": str(tmp_path / "home"),
                "MCPSYNC_STATE_DIR": str(tmp_path / "state"),
            }
            proj = Project(write_project(tmp_path / "p", TOML), registry, store, env)
            assert proj.run("lock").code == 0
            proj.lock = lock_bytes(proj.root)
            yield proj


def manifest_digest() -> str:
    return "sha256:" + sha256(manifest_bytes("acme/postgres-mcp", "3.1.0"))


def test_a_lock_with_artifacts_is_intact_for_check_and_sync(project: Project) -> None:
    image = f"{project.store.host}/acme/postgres-mcp:3.1.0@{manifest_digest()}"
    assert project.entry("postgres")["launch"] == {
        "command": "docker",
        "args": ["run", "-i", "--rm", image],
        "identifier": f"{project.store.host}/acme/postgres-mcp:3.1.0",
        "package-version": "3.1.0",
        "registry-type": "oci",
        "transport": "stdio",
    }
    assert project.entry("postgres")["artifact"]["digest"] == manifest_digest()  # type: ignore[index]
    assert project.entry("weather")["artifact"]["digest"] == NPM_SRI  # type: ignore[index]
    check = project.run("lock", "--check")
    assert (check.code, check.out) == (0, "mcp.lock is up to date.\n"), str(check)
    checked = project.run("lock", "--check", "--json")
    assert checked.code == 0 and '"tampered": []' in checked.out, str(checked)
    assert project.run("sync").code == 0
    assert image in (project.root / ".mcp.json").read_text(encoding="utf-8")
    assert project.run("sync", "--check").code == 0
    project.reset_counts()
    assert project.run("lock").code == 0  # nothing to repair: no request, same bytes
    assert (project.registry.request_count, project.store.request_count) == (0, 0)
    assert lock_bytes(project.root) == project.lock


@pytest.mark.parametrize(
    ("what", "old", "new"),
    [
        ("launch", f'@{manifest_digest()}"]', f'@{FORGED}"]'),
        ("artifact", f'digest = "{manifest_digest()}"', f'digest = "{FORGED}"'),
    ],
)
def test_an_edited_image_digest_is_caught_and_looked_up_again(
    project: Project, what: str, old: str, new: str
) -> None:
    assert project.run("sync").code == 0
    synced = [project.root / ".mcp.json"]
    age(synced)
    before = snapshot(synced)
    project.edit_lock(old, new)
    image = f"{project.store.host}/acme/postgres-mcp:3.1.0@"
    found, expected = (
        (FORGED, manifest_digest()) if what == "launch" else (manifest_digest(), FORGED)
    )
    check = project.run("lock", "--check")
    assert check.code == 1, str(check)
    assert check.err_lines == [
        f'mcp.lock: server \'postgres\' field launch.args is ["run", "-i", "--rm", '
        f'"{image}{found}"], but its recorded inputs and [server.artifact] digest render '
        f'["run", "-i", "--rm", "{image}{expected}"]; mcp.lock was edited by hand',
        "Run `mcpsync lock` to regenerate it (pins are kept).",
    ]
    for mode in ([], ["--check"], ["--dry-run"], ["--frozen"]):
        refused = project.run("sync", *mode)
        assert refused.code == 2 and "field launch.args" in refused.err, str(refused)
    assert snapshot(synced) == before
    # Which of the two digests is true cannot be told offline: the image is looked up again.
    project.reset_counts()
    repaired = project.run("lock")
    assert repaired.code == 0, str(repaired)
    assert repaired.err_lines[1:] == ["Repaired postgres 1.0.0 (launch edited by hand)"]
    assert project.registry.request_count == 1
    assert any("/v2/acme/postgres-mcp/manifests/3.1.0" in r for r in project.store.requests)
    assert lock_bytes(project.root) == project.lock
    assert project.run("lock", "--check").code == 0


def test_an_image_digest_edited_with_artifacts_off_is_locked_without_a_pin(
    project: Project,
) -> None:
    project.edit_lock(f'@{manifest_digest()}"]', f'@{FORGED}"]')
    assert project.run("lock", "--no-artifacts").code == 0
    postgres = project.entry("postgres")
    assert "artifact" not in postgres  # neither digest could be trusted, none was looked up
    assert postgres["launch"]["args"][-1].endswith("postgres-mcp:3.1.0")  # type: ignore[index]
    assert project.run("lock", "--check", "--no-artifacts").code == 0
    assert postgres["no-artifact"] == "artifacts-off"  # recorded with why: no staleness
    check = project.run("lock", "--check")
    assert check.code == 0, str(check)
    assert check.err_lines == [
        "note: postgres 1.0.0 has no artifact digest: artifacts were off when it was locked"
    ]


def test_other_artifact_records_are_facts_for_an_online_check(project: Project) -> None:
    """An npm record is the store's word, not derived from anything in the lock: --check
    cannot question it offline; `verify` looks it up again and tells, -P restores it."""
    project.edit_lock(f'digest = "{NPM_SRI}"', f'digest = "{FORGED_SRI}"')
    assert project.run("lock", "--check").code == 0
    assert project.run("sync").code == 0  # the record is not questioned offline
    verified = project.run("verify")
    assert (verified.code, verified.err) == (
        1,
        f"drift: server 'weather': artifact digest changed: mcp.lock pins {FORGED_SRI}, "
        f"the store now has {NPM_SRI}\n",
    ), str(verified)
    relock = project.run("lock", "-P", "weather")
    assert relock.code == 0, str(relock)
    assert relock.err_lines[1:] == ["Changed weather 1.2.0 (artifact digests changed)"]
    assert lock_bytes(project.root) == project.lock


def test_a_merge_conflict_keeps_the_side_with_the_artifact_records(project: Project) -> None:
    """Both sides pin the same versions, one with artifact records (locked with artifacts
    on), one without: the records are kept, so resolving the conflict asks nobody."""
    lock = lockfile.loads(project.lock.decode(), project.root / "mcp.lock")
    bare = lockfile.dumps(lockfile.Lock(tuple(replace(s, artifact=None) for s in lock.servers)))
    for ours, theirs in ((bare, project.lock.decode()), (project.lock.decode(), bare)):
        conflicted = f"<<<<<<< ours\n{ours}=======\n{theirs}>>>>>>> theirs\n"
        (project.root / "mcp.lock").write_text(conflicted, encoding="utf-8")
        project.reset_counts()
        result = project.run("lock")
        assert result.code == 0, str(result)
        assert (project.registry.request_count, project.store.request_count) == (0, 0)
        assert lock_bytes(project.root) == project.lock


def test_a_merge_keeps_one_sides_artifact_records_and_the_others_probed_surface(
    project: Project,
) -> None:
    """One branch ran `mcpsync probe` on a lock without artifact records, the other locked
    with artifacts on: the same pin (an npm launch, the same either way) keeps both."""
    from mcpsync.lock.surface import Tool, make

    path = project.root / "mcp.lock"
    lock = lockfile.loads(project.lock.decode(), path)
    surface = make([Tool("forecast", "Weather for a city.", {"type": "object"})])
    probed = lockfile.dumps(
        lockfile.Lock(
            tuple(
                replace(s, artifact=None, surface=surface) if s.alias == "weather" else s
                for s in lock.servers
            )
        )
    )
    both = lockfile.dumps(
        lockfile.Lock(
            tuple(replace(s, surface=surface) if s.alias == "weather" else s for s in lock.servers)
        )
    )
    for ours, theirs in ((probed, project.lock.decode()), (project.lock.decode(), probed)):
        path.write_text(f"<<<<<<< ours\n{ours}=======\n{theirs}>>>>>>> theirs\n", encoding="utf-8")
        project.reset_counts()
        result = project.run("lock")
        assert result.code == 0, str(result)
        assert (project.registry.request_count, project.store.request_count) == (0, 0)
        assert lock_bytes(project.root).decode() == both
