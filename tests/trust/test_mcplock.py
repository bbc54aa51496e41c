"""`export --format mcp-lock/1` and `verify --mcp-lock FILE`, against ToolPin's draft
(docs/spec/mcp-lockfile-v1.md in proofofwork-agency/toolpin): its published test vectors
(§12, test/fixtures/spec/vectors.json), one exported document checked byte for byte, and
every rule the Reader and Enforcer apply (§2–§9), each with a document that breaks it."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_helpers import (
    assert_clean_failure,
    npm_server,
    registry_toml,
    run_cli,
    write_project,
    write_snapshot,
)
from trust_helpers import VECTOR_HASH, VECTOR_TOOLS, server_table, write_tools

from mcpsync.lock.surface import Tool, canonical, make, sri
from mcpsync.trust.mcplock import check as mcplock_check
from mcpsync.trust.mcplock import export as mcplock

EPOCH = {"SOURCE_DATE_EPOCH": "1783425600"}  # 2026-07-07T12:00:00.000Z
NOW = "2026-07-07T12:00:00.000Z"
NAME = "io.github.t/alpha"
TARGETS = (
    '\n[[targets]]\nkind = "claude-code"\n'
    '\n[[targets]]\nkind = "holodeck-agent"\npath = "agents/*/agent.yaml"\n'
)


# ---------------------------------------------------------------- the draft's vectors (§12)


def test_canonicalization_vectors() -> None:
    assert (
        canonical({"b": 1, "a": [True, None, "café"]}) == '{"a":[true,null,"café"],"b":1}'.encode()
    )
    assert canonical({"nested": {"z": "", "y": 0}}) == b'{"nested":{"y":0,"z":""}}'


def test_surface_vector() -> None:
    tools = [Tool(t["name"], t["description"], t["inputSchema"]) for t in VECTOR_TOOLS]
    assert make(tools).hash == VECTOR_HASH


def vector_entry() -> dict[str, Any]:
    """The draft's entryIntegrity vector (its canonicalPayload, as an object)."""
    return {
        "name": "io.github.example/postgres",
        "version": "1.4.2",
        "client": "claude-code",
        "scope": "project",
        "source": {
            "registry": "https://registry.modelcontextprotocol.io",
            "id": "io.github.example/postgres",
        },
        "target": {
            "type": "package",
            "registryType": "npm",
            "identifier": "@example/postgres-mcp",
            "version": "1.4.2",
            "transport": "stdio",
            "artifact": {
                "digest": "sha256-P1lpO2u6UWTeF0Y0Y8aTL6TX8O0Q9jc7W3m4G5h6I7k=",
                "method": "npm-sri",
            },
        },
        "configDigest": "sha256-4rLmVYm0eXBg4dp2v9O4t2c1FQnb0m9uS0T5b8n7hVQ=",
        "resolvedAt": "2026-07-07T11:59:58.120Z",
        "lockedAt": "2026-07-07T12:00:00.000Z",
    }


def test_entry_integrity_vector() -> None:
    entry = vector_entry()
    assert canonical(entry).decode().startswith('{"client":"claude-code","configDigest":')
    assert mcplock.integrity(entry) == "sha256-yM6lkq6OZiQXr/xZMhix2S3Cb1C4A6f0AmvU15M7W8M="
    sealed = entry | {"integrity": mcplock.integrity(entry)}
    assert mcplock.integrity(sealed) == sealed["integrity"]  # integrity leaves itself out


def remote_document() -> dict[str, Any]:
    """The draft's positive/remote-with-surface.json (the wholeLockDigest vector's input)."""
    entry = {
        "name": "com.example/search",
        "version": "2.0.0",
        "client": "cursor",
        "scope": "project",
        "source": {
            "registry": "https://registry.modelcontextprotocol.io",
            "id": "com.example/search",
        },
        "target": {
            "type": "remote",
            "transport": "streamable-http",
            "url": "https://mcp.example.com/v1",
            "headerSecretNames": ["EXAMPLE_API_KEY"],
        },
        "surface": {
            "hash": VECTOR_HASH,
            "coverage": ["name", "description", "inputSchema"],
            "toolCount": 2,
            "capturedAt": "2026-07-07T11:59:59.000Z",
        },
        "verification": [
            {
                "code": "remote-probe",
                "status": "passed",
                "verifier": "toolpin/0.4.0",
                "method": "tools-list",
                "anchor": "mcp.example.com",
                "verifiedAt": "2026-07-07T11:59:59.000Z",
                "required": True,
            },
            {"code": "artifact-integrity", "status": "unavailable"},
        ],
        "extensions": {"dev.toolpin": {"trust": {"tier": "verified", "score": 92}}},
        "configDigest": "sha256-mmi7cVjkzcOQ0i3q4dY0S3h1p9c8b7a6Z5x4W3v2U1t=",
        "resolvedAt": "2026-07-07T11:59:58.120Z",
        "lockedAt": "2026-07-07T12:00:00.000Z",
        "integrity": "sha256-GuB/eV3Lu5rVPuuePBei3cJb0iTHegJe+d5GXYeAqh8=",
    }
    return {
        "specVersion": 1,
        "generatedAt": "2026-07-07T12:00:00.000Z",
        "updatedAt": "2026-07-07T12:00:00.000Z",
        "entries": [entry],
        "extensions": {"dev.toolpin": {"source": "curated"}},
    }


def test_whole_lock_digest_vector_and_positive_documents() -> None:
    doc = remote_document()
    assert mcplock.whole_lock_digest(doc) == "sha256-hDXbW/JOOwyIjQK3UzkNQw39rrvqQgwzuwEqxVO+atg="
    assert mcplock_check.validate(doc) == []  # its integrity vector checks out too
    minimal = {"specVersion": 1, "entries": [vector_entry()]}
    minimal["entries"][0]["integrity"] = "sha256-yM6lkq6OZiQXr/xZMhix2S3Cb1C4A6f0AmvU15M7W8M="
    assert mcplock_check.validate(minimal) == []
    assert mcplock_check.validate({"specVersion": 1, "entries": []}) == []  # a Reader accepts it
    unknown = copy.deepcopy(minimal)
    unknown["entries"][0]["futureOptionalField"] = "tolerated-and-hashed"
    reseal(unknown["entries"][0])
    assert (
        unknown["entries"][0]["integrity"] == "sha256-dnJDq0qFL22Ftov6edEstiRKFNExTmClBN5AlmjfVC8="
    )
    assert mcplock_check.validate(unknown) == []


# ---------------------------------------------------------------- the Reader's rules


def reseal(entry: dict[str, Any]) -> None:
    entry["integrity"] = mcplock.integrity(entry)


def rules(doc: Any) -> list[str]:
    return [v.rule for v in mcplock_check.validate(doc)]


def with_entry(change: Callable[[dict[str, Any]], None], seal: bool = True) -> dict[str, Any]:
    doc = remote_document()
    change(doc["entries"][0])
    if seal:
        reseal(doc["entries"][0])
    return doc


def set_path(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(entry: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = entry
        for key in parents:
            node = node[key]
        if value is DELETE:
            del node[last]
        else:
            node[last] = value

    return change


DELETE = object()
OCI = {"type": "package", "registryType": "oci", "identifier": "ghcr.io/example/mcp:latest"}


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        (set_path("version", "2.0.1"), None),  # resealed: fine structurally
        (set_path("configDigest", "sha256:deadbeef"), "bad-digest-format"),
        (set_path("surface.hash", "sha256:00"), "bad-digest-format"),
        (set_path("target", OCI), "oci-mutable-identifier"),
        (set_path("target.url", "http://mcp.example.com/v1"), "remote-url-not-https"),
        (set_path("target.headerSecretNames", ["Bearer abc123"]), "header-secret-not-a-name"),
        (set_path("target", {"type": "carrier-pigeon"}), "unknown-target-type"),
        (set_path("target.transport", DELETE), "missing-field:transport"),
        (set_path("surface.coverage", ["description"]), "surface-coverage-invalid"),
        (
            set_path("surface.coverage", ["name", "description", "color"]),
            "surface-coverage-invalid",
        ),
        (set_path("surface.toolCount", -1), "bad-tool-count"),
        (set_path("client", "Claude Code"), "bad-client-identifier"),
        (set_path("scope", "global"), "bad-scope"),
        (set_path("lockedAt", "yesterday"), "bad-timestamp"),
        (set_path("source", {"id": "x"}), "bad-source"),
        (set_path("name", ""), "bad-name"),
        (set_path("verification", [{"code": "x", "status": "ok"}]), "bad-evidence-status"),
        (set_path("verification", {}), "verification-not-array"),
        (set_path("extensions", {"toolpin": {}}), "bad-extension-namespace"),
        (set_path("resolvedAt", DELETE), "missing-field:resolvedAt"),
        (set_path("configDigest", DELETE), "missing-field:configDigest"),
    ],
)
def test_reader_rules(change: Callable[[dict[str, Any]], None], rule: str | None) -> None:
    assert rules(with_entry(change)) == ([rule] if rule else [])


def test_reader_rules_about_the_document() -> None:
    assert rules(with_entry(set_path("version", "2.0.1"), seal=False)) == ["integrity-mismatch"]
    assert rules(with_entry(set_path("integrity", DELETE), seal=False)) == [
        "missing-field:integrity"
    ]
    assert rules(remote_document() | {"specVersion": 2}) == ["unsupported-spec-version"]
    assert rules(remote_document() | {"specVersion": True}) == ["unsupported-spec-version"]
    assert rules({"specVersion": 1}) == ["missing-entries"]
    assert rules([]) == ["not-an-object"]
    assert rules(remote_document() | {"extensions": []}) == ["extensions-not-object"]
    doubled = remote_document()
    doubled["entries"].append(copy.deepcopy(doubled["entries"][0]))
    assert rules(doubled) == ["duplicate-entry-identity"]


def test_strict_json_refuses_nfc_duplicates_and_nan(tmp_path: Path) -> None:
    text = '{"specVersion": 1, "entries": [], "extensions": '
    text += '{"dev.x": {"caf\\u00e9": 1, "cafe\\u0301": 2}}}'  # é, and e + combining acute
    path = tmp_path / "l.json"
    path.write_text(text)
    assert [v.rule for v in mcplock_check.read(path)[1]] == ["nfc-duplicate-key"]
    path.write_text('{"specVersion": 1, "entries": [], "x": NaN}')
    assert [v.rule for v in mcplock_check.read(path)[1]] == ["malformed"]
    path.write_bytes(b'{"a": "\xff"}')
    assert [v.rule for v in mcplock_check.read(path)[1]] == ["malformed"]


# ---------------------------------------------------------------- export


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    url = write_snapshot(root, npm_server(NAME, ["1.0.0"]))
    write_project(root, registry_toml({"alpha": {"name": NAME}}, registry=url) + TARGETS)
    (root / "agents" / "a").mkdir(parents=True)
    (root / "agents" / "a" / "agent.yaml").write_text("name: a\n")
    assert run_cli("-C", root, "lock").code == 0
    return root


def export(root: Path, *args: str) -> dict[str, Any]:
    done = run_cli("-C", root, "export", "--format", "mcp-lock/1", *args, env=EPOCH)
    assert done.code == 0, done
    return json.loads(done.out) if done.out else {}


def test_export_writes_one_conforming_entry_per_server_and_client(project: Path) -> None:
    doc = export(project)
    assert mcplock_check.validate(doc) == []
    assert [(e["name"], e["client"], e["scope"]) for e in doc["entries"]] == [
        (NAME, "claude-code", "project"),
        (NAME, "holodeck-agent", "project"),
    ]
    first = doc["entries"][0]
    assert first["target"] == {
        "type": "package",
        "registryType": "npm",
        "identifier": "@test/alpha",
        "version": "1.0.0",
        "transport": "stdio",
    }
    assert first["source"] == {"registry": "file:registry", "id": NAME}
    assert (first["resolvedAt"], first["lockedAt"], doc["generatedAt"]) == (NOW, NOW, NOW)
    # configDigest: §8.1 digest of the entry sync really writes into .mcp.json
    state = {"MCPSYNC_STATE_DIR": str(project.parent / "state"), "HOME": str(project.parent)}
    assert run_cli("-C", project, "sync", env=state).code == 0
    written = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert first["configDigest"] == mcplock.digest(written)
    tools = yaml.safe_load((project / "agents" / "a" / "agent.yaml").read_text())["tools"]
    assert doc["entries"][1]["configDigest"] == mcplock.digest({"alpha": tools[0]})
    assert "surface" not in first  # not probed yet
    assert first["integrity"] == mcplock.integrity(first)
    # deterministic, written with -o, and the file passes its own Enforcer; a relative FILE
    # is as from -C DIR (how the MCP server runs commands), not from this process's directory
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    args = ["-C", project, "export", "--format", "mcp-lock/1", "-o", "l.json"]
    assert run_cli(*args, env=EPOCH, cwd=elsewhere).code == 0
    assert list(elsewhere.iterdir()) == []
    assert json.loads((project / "l.json").read_text()) == doc
    assert (project / "l.json").read_text() == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    ok = run_cli("-C", project, "verify", "--mcp-lock", "l.json", cwd=elsewhere)
    assert (ok.code, ok.out) == (0, "mcp.lock verified: nothing drifted.\n"), ok


def test_export_carries_the_probed_surface(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", server_table("db", "tools.json") + TARGETS[:34])
    write_tools(root, VECTOR_TOOLS)
    assert run_cli("-C", root, "lock").code == 0
    assert run_cli("-C", root, "probe").code == 0
    (entry,) = export(root)["entries"]
    assert entry["surface"] == {
        "hash": VECTOR_HASH,
        "coverage": ["name", "description", "inputSchema"],
        "toolCount": 2,
    }
    assert entry["source"] == {"registry": "manual"}
    assert entry["target"]["registryType"] == "dev.mcpsync.command"


def test_export_refuses_what_the_draft_cannot_express(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p", '[servers.web]\nurl = "http://127.0.0.1:9/mcp"\n' + TARGETS[:34]
    )
    assert run_cli("-C", root, "lock").code == 0
    done = run_cli("-C", root, "export", "--format", "mcp-lock/1")
    assert_clean_failure(done, 2, "Server 'web' cannot be exported as mcp-lock/1", "not https")


# ---------------------------------------------------------------- the Enforcer (§9)


def enforce(root: Path, doc: Any, *args: str) -> tuple[int, list[str]]:
    path = root / "l.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    done = run_cli("-C", root, "verify", "--mcp-lock", path, *args)
    lines = [line for line in done.err.splitlines() if line.startswith("mcp-lock: ")]
    return done.code, lines


def test_enforcer_fails_a_missing_malformed_empty_or_tampered_file(project: Path) -> None:
    done = run_cli("-C", project, "verify", "--mcp-lock", project / "nope.json")
    assert done.code == 1 and "mcp-lock: missing-lockfile at " in done.err
    assert enforce(project, "{")[1][0].startswith("mcp-lock: malformed at ")
    empty = {"specVersion": 1, "entries": []}
    assert enforce(project, empty)[1] == [
        "mcp-lock: empty-lockfile at $.entries: an enforcer treats it as failure",
        f"mcp-lock: entry-missing at $.entries (entry {NAME} claude-code project): "
        "server 'alpha' is synced to claude-code but has no entry",
        f"mcp-lock: entry-missing at $.entries (entry {NAME} holodeck-agent project): "
        "server 'alpha' is synced to holodeck-agent but has no entry",
    ]
    doc = export(project)
    doc["entries"][0]["version"] = "1.0.1"
    assert enforce(project, doc) == (
        1,
        [
            f"mcp-lock: integrity-mismatch at $.entries[0].integrity "
            f"(entry {NAME} claude-code project): the entry was changed"
        ],
    )


def test_enforcer_fails_a_changed_target_config_or_surface(project: Path) -> None:
    doc = export(project)
    entry = doc["entries"][0]
    entry["target"]["identifier"] = "@evil/alpha"
    entry["configDigest"] = mcplock.digest({"alpha": {"command": "npx", "args": ["@evil/alpha"]}})
    entry["surface"] = {"hash": VECTOR_HASH, "coverage": ["name", "description"], "toolCount": 2}
    reseal(entry)
    code, lines = enforce(project, doc)
    assert code == 1
    assert [line.split(" at ")[0] for line in lines] == [
        "mcp-lock: target-changed",
        "mcp-lock: config-digest-mismatch",
    ]  # no surface pinned in mcp.lock: nothing to compare it with (reduced coverage)
    resolved = export(project)
    ours = resolved["entries"][1]["extensions"]["dev.mcpsync"]
    locked, ours["serverJsonDigest"] = ours["serverJsonDigest"], "sha256:00"
    reseal(resolved["entries"][1])
    assert enforce(project, resolved)[1] == [
        "mcp-lock: target-changed at $.entries[1].extensions.dev.mcpsync.serverJsonDigest "
        f"(entry {NAME} holodeck-agent project): resolved from server.json sha256:00, "
        f"mcp.lock now pins {locked}"
    ]
    doc["entries"][0]["name"] = "io.github.t/other"
    reseal(doc["entries"][0])
    code, lines = enforce(project, doc)
    assert [line.split(" at ")[0] for line in lines] == [
        "mcp-lock: entry-not-in-project",
        "mcp-lock: entry-missing",
    ]


FUTURE = {"futureTarget": 1}  # an optional member a later draft revision might add (§10)


def with_future_members(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` with an unknown optional member at every level §10 names (the top level, the
    entry, `target`, `surface`, an evidence record) and in `source` and `target.artifact`;
    every entry resealed (integrity covers them)."""
    doc = copy.deepcopy(doc) | {"futureTop": {"a": [1]}}
    for entry in doc["entries"]:
        entry["futureEntry"] = "x"
        entry["source"]["futureSource"] = True
        entry["target"] |= FUTURE
        if "artifact" in entry["target"]:
            entry["target"]["artifact"]["futureArtifact"] = "y"
        if "surface" in entry:
            entry["surface"]["futureSurface"] = 0
        entry.setdefault("verification", []).append(
            {"code": "future-check", "status": "passed", "futureEvidence": None}
        )
        reseal(entry)
    return doc


def test_unknown_optional_members_are_accepted_at_every_level(project: Path) -> None:
    doc = with_future_members(export(project))
    assert mcplock_check.validate(doc) == []
    assert enforce(project, doc) == (0, [])
    assert enforce(project, doc, "--lock-digest", mcplock.whole_lock_digest(doc)) == (0, [])
    # still tamper-evident: the unknown member is under integrity
    doc["entries"][0]["target"]["futureTarget"] = 2
    assert rules(doc) == ["integrity-mismatch"]
    # and a member the draft defines is still compared, whatever else the target carries
    doc["entries"][0]["target"]["transport"] = "sse"
    reseal(doc["entries"][0])
    assert enforce(project, doc)[1] == [
        f"mcp-lock: target-changed at $.entries[0].target (entry {NAME} claude-code project): "
        "pinned @test/alpha 1.0.0, now @test/alpha 1.0.0 (target.transport)"
    ]


def test_the_enforcer_compares_only_the_artifact_members_the_draft_defines() -> None:
    doc = with_future_members({"specVersion": 1, "entries": [vector_entry()]})
    entry = doc["entries"][0]
    artifact = {"digest": "sha256-" + "A" * 43 + "=", "method": "oci-manifest-digest"}
    now = {k: v for k, v in entry.items() if k not in ("integrity", "resolvedAt", "lockedAt")}
    now = copy.deepcopy(now) | {"extensions": {"dev.mcpsync": {}}}
    now["target"] = {k: v for k, v in now["target"].items() if k != "futureTarget"}
    now["target"]["artifact"] = artifact
    entry["target"]["artifact"] = artifact | {"futureArtifact": "y"}
    reseal(entry)
    assert mcplock_check.validate(doc) == []
    core = mcplock.Core((entry["name"], entry["client"], "project"), "pg", now)
    assert mcplock_check.enforce(doc, [core], {}) == []
    entry["target"]["artifact"]["digest"] = "sha256-" + "B" * 43 + "="
    reseal(entry)
    assert [v.detail.rsplit("(", 1)[1] for v in mcplock_check.enforce(doc, [core], {})] == [
        "target.artifact)"
    ]


def test_enforcer_compares_surfaces_under_the_pinned_coverage(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", server_table("db", "tools.json") + TARGETS[:34])
    write_tools(root, VECTOR_TOOLS)
    assert run_cli("-C", root, "lock").code == 0
    assert run_cli("-C", root, "probe").code == 0
    doc = export(root)
    entry = doc["entries"][0]
    records = [{"name": t["name"], "description": t["description"]} for t in VECTOR_TOOLS]
    records.sort(key=lambda r: r["name"])
    entry["surface"] = {"hash": mcplock.digest(records), "coverage": ["name", "description"]}
    reseal(entry)
    assert enforce(root, doc) == (0, [])
    entry["surface"]["hash"] = VECTOR_HASH  # the full-coverage hash under a smaller coverage
    reseal(entry)
    code, lines = enforce(root, doc)
    assert code == 1 and lines[0].startswith("mcp-lock: surface-hash-mismatch at $.entries[0]")
    # a fresh probe is what --surface compares: change a description, the pin fails
    good = export(root)
    write_tools(root, [dict(VECTOR_TOOLS[0], description="changed"), VECTOR_TOOLS[1]])
    code, lines = enforce(root, good, "--surface")
    assert code == 1 and [line.split(" at ")[0] for line in lines] == [
        "mcp-lock: surface-hash-mismatch"
    ]


def test_enforcer_checks_a_given_whole_lock_digest(project: Path) -> None:
    doc = export(project)
    right = mcplock.whole_lock_digest(doc)
    assert enforce(project, doc, "--lock-digest", right) == (0, [])
    code, lines = enforce(project, doc, "--lock-digest", VECTOR_HASH)
    assert code == 1 and lines == [
        f"mcp-lock: whole-lock-digest-mismatch at $: is {right}, expected {VECTOR_HASH}"
    ]
    assert_clean_failure(run_cli("-C", project, "verify", "--lock-digest", right), 2, "--mcp-lock")


# ---------------------------------------------------------------- §8.4 signatures


VECTOR_KEY = "MCowBQYDK2VwAyEAYKDeXBMUZgUMaTzVBvX7eYVZ+Qgelsc8pV5r2hDzuTE="


def vector_envelope() -> dict[str, Any]:
    """The draft's signature vector: it signs remote_document()."""
    return {
        "schema": "mcp-lock-signature",
        "version": 1,
        "algorithm": "ed25519",
        "lockfileDigest": "sha256-hDXbW/JOOwyIjQK3UzkNQw39rrvqQgwzuwEqxVO+atg=",
        "policyDigest": "sha256-+yE+TFdV1p+a0Xg9KRk+L+yVKO33UfKk3nPW39HqUDI=",
        "publicKeyFingerprint": "sha256-nR1xVXWS38aTJYIRol9+L91TyGO7JiYnaeD7toPLCNE=",
        "signedAt": "2026-07-07T12:00:01.000Z",
        "signature": "ofrpbMls3H7hU4S0cH5rOEsruWXsJ6Wgv+PPKqTPy80+LSlydkHde5HYSjTw10LaT8/ixtb7P33"
        "WyOrKilbcDg==",
    }


def signature_rules(tmp_path: Path, doc: Any, envelope: Any, key: str = VECTOR_KEY) -> list[str]:
    (tmp_path / "sig").write_text(json.dumps(envelope))
    (tmp_path / "key").write_text(key)
    return [v.rule for v in mcplock_check.signature(doc, tmp_path / "sig", tmp_path / "key")]


def test_signature_vector(tmp_path: Path) -> None:
    doc, envelope = remote_document(), vector_envelope()
    payload = {k: v for k, v in envelope.items() if k != "signature"}
    assert canonical(payload).decode().startswith('{"algorithm":"ed25519","lockfileDigest":')
    assert signature_rules(tmp_path, doc, envelope) == []
    assert signature_rules(tmp_path, doc, envelope | {"signedAt": "2026-07-08T00:00:00Z"}) == [
        "signature-invalid"  # signedAt is inside the signed payload
    ]
    assert signature_rules(tmp_path, doc, envelope | {"algorithm": "rsa"}) == [
        "signature-unknown-algorithm"
    ]
    assert signature_rules(tmp_path, doc, envelope | {"version": 2}) == ["signature-malformed"]
    changed = remote_document()
    changed["entries"][0]["version"] = "2.0.1"
    reseal(changed["entries"][0])
    assert signature_rules(tmp_path, changed, envelope) == ["signature-lockfile-digest-mismatch"]
    later = remote_document() | {"generatedAt": "2030-01-01T00:00:00.000Z"}
    assert signature_rules(tmp_path, later, envelope) == []  # timestamps are outside the digest


def test_verify_checks_a_signature_with_the_key_given(project: Path, tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    doc = export(project)
    (project / "l.json").write_text(json.dumps(doc))

    def sign(key: Ed25519PrivateKey) -> str:
        spki = key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        envelope = {
            "schema": "mcp-lock-signature",
            "version": 1,
            "algorithm": "ed25519",
            "lockfileDigest": mcplock.whole_lock_digest(doc),
            "publicKeyFingerprint": sri(spki),
            "signedAt": NOW,
        }
        envelope["signature"] = base64.b64encode(key.sign(canonical(envelope))).decode()
        (project / "mcp-lock.sig").write_text(json.dumps(envelope))
        pem = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        (project / "key.pem").write_bytes(pem)
        return str(project / "key.pem")

    ours = Ed25519PrivateKey.generate()
    key = sign(ours)
    args = ["verify", "--mcp-lock", project / "l.json", "--signature", project / "mcp-lock.sig"]
    assert run_cli("-C", project, *args, "--public-key", key).code == 0
    sign(Ed25519PrivateKey.generate())  # a signature by someone else, checked with our key
    (project / "ours.pem").write_bytes(
        ours.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    done = run_cli("-C", project, *args, "--public-key", project / "ours.pem")
    assert done.code == 1
    assert [line.split(" at ")[0] for line in done.err.splitlines()] == [
        "mcp-lock: signature-key-mismatch",
        "mcp-lock: signature-invalid",
    ]
    lone = run_cli("-C", project, *args)
    assert_clean_failure(lone, 2, "--signature and --public-key go together")


def test_export_carries_verified_artifacts_and_declares_the_rest(tmp_path: Path) -> None:
    from artifact_stubs import ArtifactStub, manifest_bytes
    from registry_stub import RegistryStub, make_item, npm_package

    sri = "sha512-" + "A" * 86 + "=="
    with ArtifactStub() as store:
        store.npm["@acme/weather"] = {"1.2.0": sri}
        store.images["acme/pg"] = {"3.1.0"}
        image = f"{store.host}/acme/pg:3.1.0"
        oci = {"registryType": "oci", "identifier": image, "transport": {"type": "stdio"}}
        items = [
            make_item("io.github.acme/pg", "3.1.0", packages=[oci], is_latest=True),
            make_item(
                "io.github.acme/weather",
                "1.2.0",
                packages=[npm_package("@acme/weather", "1.2.0")],
                is_latest=True,
            ),
        ]
        with RegistryStub(items) as reg:
            env = {**store.env(), "MCPSYNC_ARTIFACTS": "", "HOME": str(tmp_path)}
            env |= {"MCPSYNC_REGISTRY": reg.url, **EPOCH}
            servers = {"pg": {"name": "io.github.acme/pg"}, "w": {"name": "io.github.acme/weather"}}
            root = write_project(tmp_path / "p", registry_toml(servers) + TARGETS[:34])
            assert run_cli("-C", root, "lock", env=env).code == 0
            done = run_cli("-C", root, "export", "--format", "mcp-lock/1", env=env)
            doc = json.loads(done.out)
            assert mcplock_check.validate(doc) == []
            pg, weather = doc["entries"]
            hexdigest = hashlib.sha256(manifest_bytes("acme/pg", "3.1.0")).hexdigest()
            assert pg["target"]["identifier"] == f"{image}@sha256:{hexdigest}"
            assert pg["target"]["artifact"] == {
                "digest": "sha256-" + base64.b64encode(bytes.fromhex(hexdigest)).decode(),
                "method": "oci-manifest-digest",
            }
            assert "verification" not in pg
            assert "artifact" not in weather["target"]  # npm's integrity is declared, not verified
            assert weather["verification"] == [
                {
                    "code": "artifact-integrity",
                    "status": "declared",
                    "method": "npm-sri",
                    "anchor": "127.0.0.1",
                }
            ]
            assert weather["extensions"]["dev.mcpsync"]["artifact"]["digest"] == sri
            (root / "l.json").write_text(done.out)
            ok = run_cli("-C", root, "verify", "--mcp-lock", root / "l.json", env=env)
            assert ok.code == 0, ok
