"""What an artifact record is, what a lookup needs, and what a re-check finds. Plain values,
no network: lockfile.py reads and writes these, resolve.py and `verify` consume them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from msgspec import Struct, field

from mcpsync.launch import Launch

# How a digest was obtained. Never mixed up: only "downloaded-and-hashed" means mcpsync itself
# hashed bytes it downloaded; the others are what someone else declares.
SOURCES = {
    "npm-registry": "dist.integrity as the npm registry's metadata for that version declares it",
    "pypi-index": "each file's sha256 as the package index declares it",
    "downloaded-and-hashed": "mcpsync downloaded the bytes and hashed them itself",
    "publisher-declared": "the digest the server.json itself names (an image@sha256 identifier)",
}
KINDS = ("npm", "pypi", "oci", "mcpb")
# Why an entry whose launch has a store records no digest (mcp.lock's `no-artifact`).
NO_ARTIFACT = {
    "artifacts-off": "artifacts were off when it was locked",
    "opted-out": "`artifacts = false` for this server in mcp.toml",
    "store-unreachable": "its store could not be reached when it was locked",
}
# The reasons a later lock with artifacts on looks the digest up again for (an opt-out stays).
BACKFILL = ("artifacts-off", "store-unreachable")
_SHA256 = re.compile(r"^sha256:[a-f0-9]{64}$")
# The launch's own flag naming a non-default store (launch/rendering.py puts it first).
STORE_FLAGS = {"npm": ("-y", "--registry"), "pypi": ("--index-url",)}


class Artifact(Struct, frozen=True):
    """One server's artifact record in mcp.lock ([server.artifact]).

    npm: `digest` is the SRI integrity ("sha512-…"); pypi: `files` maps each file of the exact
    version to "sha256:…"; oci: `digest` is the image manifest's "sha256:…" (the launch runs
    `image:tag@digest`); mcpb: `digest` is the bundle's "sha256:…"."""

    source: str
    store: str  # the store asked, with no credentials
    digest: str | None = None
    files: Mapping[str, str] = field(default_factory=dict)


class Wanted(Struct, frozen=True):
    """What to look up for one launch."""

    kind: str  # npm | pypi | oci | mcpb
    identifier: str
    version: str
    store: str | None = None  # the store the launch names (--registry, --index-url), if any
    file_sha256: str | None = None  # mcpb: what the publisher declares


class Drift(Struct, frozen=True):
    """An artifact that no longer matches the lock (for `mcpsync verify`)."""

    alias: str
    message: str  # one line: what differs
    locked: str | None = None
    found: str | None = None


class StoreSettings(Struct, frozen=True):
    """Where the stores' configuration comes from: the project (its .npmrc), the environment
    (npm_config_*, UV_*/PIP_INDEX_URL, HOME) and the per-request timeout."""

    root: Path
    env: Mapping[str, str]
    timeout: float = 5.0
    concurrency: int = 32


def wanted(launch: Launch) -> Wanted | None:
    """The lookup for a registry launch of a kind with a store; None for anything else."""
    kind = launch.registry_type
    if kind not in KINDS or not launch.identifier or not launch.package_version:
        return None
    return Wanted(
        kind=kind,
        identifier=launch.identifier,
        version=launch.package_version,
        store=_store_flag(kind, launch.args),
        file_sha256=launch.file_sha256,
    )


def _store_flag(kind: str, args: tuple[str, ...]) -> str | None:
    prefix = STORE_FLAGS.get(kind)
    if prefix is None or len(args) <= len(prefix) or args[: len(prefix)] != prefix:
        return None
    return args[len(prefix)]


def oci_image_digest(launch: Launch, artifact: Artifact | None) -> str | None:
    """The digest a re-render of this launch must pin its image to (render(image_digest=…))."""
    if launch.registry_type != "oci" or artifact is None or artifact.digest is None:
        return None
    if artifact.source != "downloaded-and-hashed" or not _SHA256.match(artifact.digest):
        return None
    return artifact.digest
