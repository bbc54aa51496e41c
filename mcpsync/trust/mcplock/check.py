"""Reading an mcp-lock/1 file as the draft's Reader and Enforcer (§9).

Reader: the structural rules of §2–§8 (strict JSON with NFC-duplicate member names refused,
specVersion, required members, digest and timestamp formats, the target union, surface
coverage, evidence, extension namespaces, entry identity, entry integrity). Enforcer: the
document must also still hold for this project: each entry's target, configDigest and surface
against what mcp.lock yields now, and a given whole-lock digest. Nothing is ever written.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct

from mcpsync.errors import EnvFailure, InputError
from mcpsync.lock.surface import Surface, canonical, digest, sri
from mcpsync.trust.mcplock.export import (
    EXTENSION,
    SPEC_VERSION,
    Core,
    integrity,
    surface_pin,
    whole_lock_digest,
)

DIGEST = re.compile(r"sha256-[A-Za-z0-9+/]+={0,2}")
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")
CLIENT = re.compile(r"[a-z0-9][a-z0-9-]*")
NAMESPACE = re.compile(r"[a-z0-9-]+(\.[a-z0-9-]+)+")
SECRET_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
OCI_PINNED = re.compile(r".*@sha256:[0-9a-f]{64}")
SURFACE_FIELDS = ("name", "description", "inputSchema")
REQUIRED = ("name", "version", "client", "source", "target", "configDigest", "resolvedAt")
REQUIRED_TAIL = ("lockedAt", "integrity")
STATUSES = ("passed", "failed", "declared", "unavailable")
# The members §4 defines for each target type (and §4.1's artifact): what an Enforcer compares.
# §10: a later revision may add optional members; they are accepted and covered by integrity,
# but a re-resolved target cannot be expected to carry what this reader does not know.
TARGET_MEMBERS = {
    "package": ("type", "registryType", "identifier", "version", "transport", "artifact"),
    "remote": ("type", "transport", "url", "headerSecretNames"),
}
ARTIFACT_MEMBERS = ("digest", "method")


class Violation(Struct, frozen=True):
    """A broken rule: `rule` is a stable code (e.g. integrity-mismatch), `where` a JSON path."""

    rule: str
    where: str
    detail: str = ""
    entry: str | None = None  # "name client scope", when it is about one entry

    def line(self) -> str:
        about = f" (entry {self.entry})" if self.entry else ""
        return f"{self.rule} at {self.where}{about}" + (f": {self.detail}" if self.detail else "")

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "where": self.where, "detail": self.detail, "entry": self.entry}


# ---------------------------------------------------------------- strict JSON


def parse(text: str) -> Any:
    """JSON with every object's member names unique after NFC (§8.2), no NaN/Infinity.
    Raises ValueError saying what is wrong."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            nfc = unicodedata.normalize("NFC", key)
            if nfc in seen:
                raise ValueError(f"duplicate member name after NFC normalization: {nfc!r}")
            seen.add(nfc)
        return dict(items)

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


def read(path: Path) -> tuple[Any, list[Violation]]:
    """The document at `path` and the §1 violation when it is missing or malformed."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None, [Violation("missing-lockfile", str(path))]
    except UnicodeDecodeError:
        return None, [Violation("malformed", str(path), "not UTF-8")]
    except OSError as exc:
        return None, [Violation("unreadable", str(path), exc.strerror or str(exc))]
    try:
        return parse(text), []
    except ValueError as exc:
        rule = "nfc-duplicate-key" if "NFC" in str(exc) else "malformed"
        return None, [Violation(rule, str(path), str(exc))]


# ---------------------------------------------------------------- Reader (§2–§8)


def validate(doc: Any) -> list[Violation]:
    out: list[Violation] = []

    def bad(rule: str, where: str, detail: str = "", entry: str | None = None) -> None:
        out.append(Violation(rule, where, detail, entry))

    if not isinstance(doc, dict):
        bad("not-an-object", "$")
        return out
    version = doc.get("specVersion")
    if type(version) is not int or version != SPEC_VERSION:
        bad("unsupported-spec-version", "$.specVersion", f"{version!r}; this reader knows 1")
    for key in ("generatedAt", "updatedAt"):
        if key in doc and not _timestamp(doc[key]):
            bad("bad-timestamp", f"$.{key}")
    if "extensions" in doc:
        _extensions(doc["extensions"], "$.extensions", bad)
    entries = doc.get("entries")
    if not isinstance(entries, list):
        bad("missing-entries", "$.entries")
        return out
    identities: set[tuple[Any, ...]] = set()
    for i, entry in enumerate(entries):
        where = f"$.entries[{i}]"
        if not isinstance(entry, dict):
            bad("entry-not-object", where)
            continue
        label = identity_label(entry)
        _entry(entry, where, lambda r, w, d="", e=label: bad(r, w, d, e))
        ident = (entry.get("name"), entry.get("client"), entry.get("scope", "project"))
        if ident in identities:
            bad("duplicate-entry-identity", where, "", label)
        identities.add(ident)
    return out


def identity_label(entry: Mapping[str, Any]) -> str:
    return f"{entry.get('name')} {entry.get('client')} {entry.get('scope', 'project')}"


def _timestamp(value: Any) -> bool:
    return isinstance(value, str) and TIMESTAMP.fullmatch(value) is not None


def _digest(value: Any) -> bool:
    return isinstance(value, str) and DIGEST.fullmatch(value) is not None


def _entry(entry: dict[str, Any], where: str, bad: Any) -> None:
    for key in (*REQUIRED, *REQUIRED_TAIL):
        if key not in entry:
            bad(f"missing-field:{key}", f"{where}.{key}")
    for key in ("name", "version"):
        if key in entry and (not isinstance(entry[key], str) or not entry[key]):
            bad(f"bad-{key}", f"{where}.{key}", "must be a non-empty string")
    client = entry.get("client")
    if "client" in entry and not (isinstance(client, str) and CLIENT.fullmatch(client)):
        bad("bad-client-identifier", f"{where}.client")
    if entry.get("scope", "project") not in ("project", "user"):
        bad("bad-scope", f"{where}.scope")
    if "source" in entry:
        _source(entry["source"], f"{where}.source", bad)
    for key in ("configDigest", "integrity"):
        if key in entry and not _digest(entry[key]):
            bad("bad-digest-format", f"{where}.{key}")
    for key in ("resolvedAt", "lockedAt"):
        if key in entry and not _timestamp(entry[key]):
            bad("bad-timestamp", f"{where}.{key}")
    if "target" in entry:
        _target(entry["target"], f"{where}.target", bad)
    if "surface" in entry:
        _surface(entry["surface"], f"{where}.surface", bad)
    if "verification" in entry:
        _verification(entry["verification"], f"{where}.verification", bad)
    if "extensions" in entry:
        _extensions(entry["extensions"], f"{where}.extensions", bad)
    if _digest(entry.get("integrity")):
        try:
            ok = integrity(entry) == entry["integrity"]
        except ValueError as exc:
            bad("integrity-uncomputable", f"{where}.integrity", str(exc))
        else:
            if not ok:
                bad("integrity-mismatch", f"{where}.integrity", "the entry was changed")


def _source(source: Any, where: str, bad: Any) -> None:
    if not isinstance(source, dict) or not isinstance(source.get("registry"), str):
        bad("bad-source", where, "needs a `registry` string")
    elif source["registry"] != "manual" and not isinstance(source.get("id"), str):
        bad("bad-source", f"{where}.id", "a registry source needs an `id`")


def _target(target: Any, where: str, bad: Any) -> None:
    if not isinstance(target, dict):
        bad("target-not-object", where)
        return
    kind = target.get("type")
    if kind == "package":
        for key in ("registryType", "identifier"):
            if not isinstance(target.get(key), str) or not target[key]:
                bad(f"missing-field:{key}", f"{where}.{key}")
        identifier = target.get("identifier")
        if target.get("registryType") == "oci" and not (
            isinstance(identifier, str) and OCI_PINNED.fullmatch(identifier)
        ):
            bad("oci-mutable-identifier", f"{where}.identifier", str(identifier))
        if "artifact" in target:
            artifact = target["artifact"]
            if not isinstance(artifact, dict) or not _digest(artifact.get("digest")):
                bad("bad-digest-format", f"{where}.artifact.digest")
            if not isinstance(artifact, dict) or not artifact.get("method"):
                bad("missing-field:artifact.method", f"{where}.artifact.method")
    elif kind == "remote":
        if not isinstance(target.get("transport"), str) or not target["transport"]:
            bad("missing-field:transport", f"{where}.transport")
        url = target.get("url")
        if not (isinstance(url, str) and url.startswith("https://")):
            bad("remote-url-not-https", f"{where}.url", str(url))
        names = target.get("headerSecretNames", [])
        if not isinstance(names, list) or not all(
            isinstance(n, str) and SECRET_NAME.fullmatch(n) for n in names
        ):
            bad("header-secret-not-a-name", f"{where}.headerSecretNames")
    else:
        bad("unknown-target-type", f"{where}.type", repr(kind))


def _surface(surface: Any, where: str, bad: Any) -> None:
    if not isinstance(surface, dict):
        bad("surface-not-object", where)
        return
    if not _digest(surface.get("hash")):
        bad("bad-digest-format", f"{where}.hash")
    coverage = surface.get("coverage")
    if (
        not isinstance(coverage, list)
        or "name" not in coverage
        or "description" not in coverage
        or any(field not in SURFACE_FIELDS for field in coverage)
        or len(set(coverage)) != len(coverage)
    ):
        bad("surface-coverage-invalid", f"{where}.coverage")
    count = surface.get("toolCount")
    if "toolCount" in surface and (type(count) is not int or count < 0):
        bad("bad-tool-count", f"{where}.toolCount")
    if "capturedAt" in surface and not _timestamp(surface["capturedAt"]):
        bad("bad-timestamp", f"{where}.capturedAt")


def _verification(records: Any, where: str, bad: Any) -> None:
    if not isinstance(records, list):
        bad("verification-not-array", where)
        return
    for i, record in enumerate(records):
        if not isinstance(record, dict) or not isinstance(record.get("code"), str):
            bad("missing-field:code", f"{where}[{i}].code")
        if not isinstance(record, dict) or record.get("status") not in STATUSES:
            bad("bad-evidence-status", f"{where}[{i}].status")


def _extensions(extensions: Any, where: str, bad: Any) -> None:
    if not isinstance(extensions, dict):
        bad("extensions-not-object", where)
        return
    for namespace in extensions:
        if not NAMESPACE.fullmatch(namespace):
            bad("bad-extension-namespace", f"{where}.{namespace}")


# ---------------------------------------------------------------- Enforcer (§9)


def enforce(
    doc: dict[str, Any],
    current: Sequence[Core],
    surfaces: Mapping[str, Surface],
    *,
    lock_digest: str | None = None,
) -> list[Violation]:
    """§9's gate, for a document that passed validate(): empty (1), target re-resolved (2),
    surface (3), configDigest (4), whole-lock digest (5), plus entries this project no longer
    has and project entries the document lacks. `surfaces`: alias -> the surface to compare
    (fresh from a probe, or mcp.lock's pin)."""
    out: list[Violation] = []
    entries: list[dict[str, Any]] = doc["entries"]
    if not entries:
        out.append(Violation("empty-lockfile", "$.entries", "an enforcer treats it as failure"))
    if lock_digest is not None and whole_lock_digest(doc) != lock_digest:
        detail = f"is {whole_lock_digest(doc)}, expected {lock_digest}"
        out.append(Violation("whole-lock-digest-mismatch", "$", detail))
    ours = {core.identity: core for core in current}
    seen: set[tuple[str, str, str]] = set()
    for i, entry in enumerate(entries):
        key = (entry["name"], entry["client"], entry.get("scope", "project"))
        seen.add(key)
        where, label = f"$.entries[{i}]", identity_label(entry)
        core = ours.get(key)
        if core is None:
            out.append(Violation("entry-not-in-project", where, "not synced by mcp.toml", label))
            continue
        out += _entry_drift(entry, core, surfaces.get(core.alias), where, label)
    for key in sorted(set(ours) - seen):
        detail = f"server '{ours[key].alias}' is synced to {key[1]} but has no entry"
        out.append(Violation("entry-missing", "$.entries", detail, " ".join(key)))
    return out


def _entry_drift(
    entry: Mapping[str, Any], core: Core, surface: Surface | None, where: str, label: str
) -> list[Violation]:
    out: list[Violation] = []
    now = core.fields
    changed = _target_changes(entry["target"], now["target"])
    if entry["version"] != now["version"]:
        changed.insert(0, "version")
    if changed:
        detail = f"pinned {_show(entry['target'])} {entry['version']}, now {_show(now['target'])}"
        detail += f" {now['version']} ({', '.join(changed)})"
        out.append(Violation("target-changed", f"{where}.target", detail, label))
    if entry["configDigest"] != now["configDigest"]:
        detail = f"the generated config now digests to {now['configDigest']}"
        out.append(Violation("config-digest-mismatch", f"{where}.configDigest", detail, label))
    out += _server_json_drift(entry, now, where, label)
    pinned = entry.get("surface")
    if pinned is not None and surface is not None:
        out += _surface_drift(pinned, surface, where, label)
    return out


def _server_json_drift(
    entry: Mapping[str, Any], now: Mapping[str, Any], where: str, label: str
) -> list[Violation]:
    """Our own extension records the server.json digest the entry was resolved from; when the
    file carries it, mcp.lock must still pin the same one (else it was resolved again)."""
    ours = entry.get("extensions", {}).get(EXTENSION)
    pinned = ours.get("serverJsonDigest") if isinstance(ours, dict) else None
    current = now["extensions"][EXTENSION].get("serverJsonDigest")
    if pinned is None or pinned == current:
        return []
    detail = f"resolved from server.json {pinned}, mcp.lock now pins {current}"
    path = f"{where}.extensions.{EXTENSION}.serverJsonDigest"
    return [Violation("target-changed", path, detail, label)]


def _surface_drift(
    pinned: Mapping[str, Any], surface: Surface, where: str, label: str
) -> list[Violation]:
    """§5: hashes compare only under the same coverage, so hash ours with the pin's
    coverage (a subset of what we capture; the draft counts a smaller one as a downgrade
    only when an update shrinks it, which our full coverage never does)."""
    coverage = list(pinned["coverage"])
    records = [{k: v for k, v in t.record().items() if k in coverage} for t in surface.tools]
    now = digest(records) if coverage != list(surface_pin(surface)["coverage"]) else surface.hash
    if now == pinned["hash"]:
        return []
    detail = f"pinned {pinned['hash']}, the tools now hash to {now}"
    return [Violation("surface-hash-mismatch", f"{where}.surface.hash", detail, label)]


def _target_changes(pinned: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """The members §4 defines that differ (as `target.<member>`); unknown ones are skipped."""
    defined = TARGET_MEMBERS.get(now["type"], ())
    return [
        f"target.{key}"
        for key in defined
        if _defined(key, pinned.get(key)) != _defined(key, now.get(key))
    ]


def _defined(key: str, value: Any) -> Any:
    if key == "artifact" and isinstance(value, Mapping):
        return {k: value[k] for k in ARTIFACT_MEMBERS if k in value}
    return value


def _show(target: Mapping[str, Any]) -> str:
    return str(target.get("identifier") or target.get("url") or target.get("type"))


# ---------------------------------------------------------------- §8.4 detached signature


def signature(doc: Mapping[str, Any], envelope_path: Path, key_path: Path) -> list[Violation]:
    """The detached envelope must name ed25519, this document's whole-lock digest and this
    key's fingerprint, and its signature must verify over the canonical envelope without
    `signature`. Raises EnvFailure when the `cryptography` package is missing."""
    envelope, problems = read(envelope_path)
    if problems:
        return [replace_rule(v, "signature-" + v.rule) for v in problems]
    where = str(envelope_path)

    def bad(rule: str, detail: str) -> list[Violation]:
        return [Violation(rule, where, detail)]

    if not isinstance(envelope, dict) or envelope.get("schema") != "mcp-lock-signature":
        return bad("signature-malformed", "not an mcp-lock-signature envelope")
    if type(envelope.get("version")) is not int or envelope["version"] != 1:
        return bad(
            "signature-malformed", f"version {envelope.get('version')!r}; this reader knows 1"
        )
    if envelope.get("algorithm") != "ed25519":
        return bad("signature-unknown-algorithm", repr(envelope.get("algorithm")))
    spki, key = _public_key(key_path)
    out: list[Violation] = []
    if envelope.get("lockfileDigest") != whole_lock_digest(doc):
        out += bad("signature-lockfile-digest-mismatch", f"the file is {whole_lock_digest(doc)}")
    if envelope.get("publicKeyFingerprint") != sri(spki):
        out += bad("signature-key-mismatch", f"the key given is {sri(spki)}")
    if not _verifies(key, envelope):
        out += bad("signature-invalid", "the signature does not verify")
    return out


def replace_rule(violation: Violation, rule: str) -> Violation:
    return Violation(rule, violation.where, violation.detail, violation.entry)


def _public_key(path: Path) -> tuple[bytes, Any]:
    """(SPKI DER, key) from a PEM file or a file holding base64 SPKI DER."""
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError:
        raise EnvFailure(
            "checking a signature needs the `cryptography` package",
            hint="pip install 'mcpsync[mcp]' (or: pip install cryptography)",
        ) from None
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"--public-key {path}: {exc.strerror or exc}") from None
    try:
        if raw.lstrip().startswith(b"-----BEGIN"):
            key = serialization.load_pem_public_key(raw)
        else:
            key = serialization.load_der_public_key(base64.b64decode(raw.strip(), validate=True))
    except (ValueError, TypeError, binascii.Error) as exc:
        raise InputError(f"--public-key {path}: not a public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise InputError(f"--public-key {path}: not an ed25519 key (§8.4 signs with ed25519)")
    spki = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return spki, key


def _verifies(key: Any, envelope: Mapping[str, Any]) -> bool:
    from cryptography.exceptions import InvalidSignature

    payload = {k: v for k, v in envelope.items() if k != "signature"}
    try:
        key.verify(
            base64.b64decode(str(envelope.get("signature", "")), validate=True), canonical(payload)
        )
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True
