"""npm: the `dist.integrity` of the exact version, as the npm registry npx would use declares it.

Which registry, as npm decides: a `@scope:registry` setting for the package's scope, else the
launch's own `--registry` (from the server.json's registryBaseUrl), else `registry` from the
environment (`npm_config_registry`), the project's `.npmrc` (beside mcp.toml), the user's
`.npmrc` (`$NPM_CONFIG_USERCONFIG` or `~/.npmrc`), else https://registry.npmjs.org. A
`//host/path/:_authToken=…` setting whose host and path prefix the registry URL is sent as a
bearer token to that registry only; tokens are never recorded or printed. `${VAR}` in .npmrc
values is expanded from the environment, as npm does.
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

from msgspec import Struct, field
from msgspec.structs import replace

from mcpsync.artifacts.model import Artifact, StoreSettings, Wanted
from mcpsync.artifacts.session import Session, json_of, not_in_store, public, refused
from mcpsync.errors import ArtifactStoreError
from mcpsync.httpfetch import Reply

DEFAULT_REGISTRY = "https://registry.npmjs.org"
T = TypeVar("T")
_CONFIG_KEY = "npm-config"
_config_lock = threading.Lock()


class NpmConfig(Struct, frozen=True):
    registry: str | None = None
    scopes: Mapping[str, str] = field(default_factory=dict)  # "@scope" -> registry URL
    tokens: Mapping[str, str] = field(default_factory=dict)  # "//host/path/" -> token


def load_config(settings: StoreSettings) -> NpmConfig:
    """npm's layers, lowest first: user .npmrc, project .npmrc, npm_config_* variables."""
    env = settings.env
    user = env.get("NPM_CONFIG_USERCONFIG") or env.get("npm_config_userconfig")
    home = env.get("HOME") or env.get("USERPROFILE")
    layers: list[dict[str, str]] = []
    for path in (Path(user) if user else Path(home) / ".npmrc" if home else None,):
        if path is not None:
            layers.append(_read_npmrc(path, env))
    layers.append(_read_npmrc(settings.root / ".npmrc", env))
    layers.append(
        {k[len("npm_config_") :]: v for k, v in env.items() if k.lower().startswith("npm_config_")}
    )
    merged: dict[str, str] = {}
    for layer in layers:
        merged.update({_key(key): value for key, value in layer.items()})
    scopes = {
        key.split(":", 1)[0]: value
        for key, value in merged.items()
        if key.startswith("@") and key.endswith(":registry")
    }
    tokens = {
        _slash(k[: -len(":_authToken")]): v
        for k, v in merged.items()
        if k.startswith("//") and k.endswith(":_authToken") and v
    }
    return NpmConfig(merged.get("registry") or None, scopes, tokens)


def _key(key: str) -> str:
    # npm reads environment keys case-insensitively; `//host/:_authToken` keys keep their case.
    return key if key.startswith("//") else key.lower()


def _read_npmrc(path: Path, env: Mapping[str, str]) -> dict[str, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[key.strip()] = _expand(value, env)
    return out


def _expand(value: str, env: Mapping[str, str]) -> str:
    return re.sub(r"\$\{([^}]+)\}", lambda m: env.get(m.group(1), ""), value)


def _slash(prefix: str) -> str:
    return prefix if prefix.endswith("/") else prefix + "/"


def registry_for(identifier: str, flag: str | None, config: NpmConfig) -> str:
    scope = identifier.split("/", 1)[0] if identifier.startswith("@") else None
    if scope is not None and scope in config.scopes:
        return config.scopes[scope]
    return flag or config.registry or DEFAULT_REGISTRY


def token_for(url: str, config: NpmConfig) -> str | None:
    """npm's "nerf dart" match: the longest `//host[:port]/path/` that prefixes the URL."""
    parts = urlsplit(url)
    nerfed = _slash(f"//{parts.netloc.rpartition('@')[2]}{parts.path}")
    best = max((key for key in config.tokens if nerfed.startswith(key)), key=len, default=None)
    return None if best is None else config.tokens[best]


def _config(session: Session) -> NpmConfig:
    with _config_lock:
        if _CONFIG_KEY not in session.cache:
            session.cache[_CONFIG_KEY] = load_config(session.settings)
        found = session.cache[_CONFIG_KEY]
    assert isinstance(found, NpmConfig)
    return found


def lookup(session: Session, wanted: Wanted, abort: threading.Event) -> Artifact:
    registry = registry_for(wanted.identifier, wanted.store, _config(session)).rstrip("/")
    label = f"npm registry {public(registry)}"
    digest = _version_document(session, wanted, abort, lambda data: integrity(data, wanted, label))
    return Artifact(source="npm-registry", store=public(registry), digest=digest)


def current_version(session: Session, wanted: Wanted, abort: threading.Event) -> str:
    """The version the `latest` dist-tag names (what `npx -y NAME` runs): `GET
    {registry}/{name}/latest`, which the npm registry answers with that version's document."""
    registry = registry_for(wanted.identifier, wanted.store, _config(session)).rstrip("/")
    label = f"npm registry {public(registry)}"

    def version(data: Any) -> str:
        found = data.get("version") if isinstance(data, dict) else None
        if not isinstance(data, dict) or data.get("name") != wanted.identifier:
            raise ArtifactStoreError(
                f"{label} answered about another package than '{wanted.identifier}'"
            )
        if not isinstance(found, str) or not found or found == "latest":
            raise ArtifactStoreError(
                f"{label} gives no version for the `latest` tag of '{wanted.identifier}'"
            )
        return found

    return _version_document(session, replace(wanted, version="latest"), abort, version)


def _version_document(
    session: Session, wanted: Wanted, abort: threading.Event, read: Callable[[Any], T]
) -> T:
    """GET the document of one version (or dist-tag) of a package, and read(its JSON)."""
    config = _config(session)
    registry = registry_for(wanted.identifier, wanted.store, config).rstrip("/")
    url = f"{registry}/{quote(wanted.identifier, safe='@')}/{quote(wanted.version, safe='')}"
    label = f"npm registry {public(registry)}"
    headers = {"Accept": "application/json"}
    token = token_for(registry + "/", config)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    what = f"npm package '{wanted.identifier}' version {wanted.version}"

    def parse(reply: Reply) -> T:
        if reply.status == 404:
            raise not_in_store(label, what)
        if not 200 <= reply.status < 300:
            raise refused(label, reply, url, hint=_auth_hint(reply.status))
        return read(json_of(reply))

    return session.get(url, abort, label=label, headers=headers, parse=parse)


def integrity(data: Any, wanted: Wanted, label: str) -> str:
    """dist.integrity (SRI, "sha512-…"), or the legacy sha1 `shasum` as SRI for old packages."""
    if not isinstance(data, dict) or data.get("name") != wanted.identifier:
        raise ArtifactStoreError(
            f"{label} answered about another package than '{wanted.identifier}'"
        )
    if str(data.get("version", "")).lstrip("v=") != wanted.version.lstrip("v="):
        raise ArtifactStoreError(
            f"{label} answered version {data.get('version')!r} of '{wanted.identifier}', "
            f"not {wanted.version}"
        )
    dist = data.get("dist")
    value = dist.get("integrity") if isinstance(dist, dict) else None
    if isinstance(value, str) and value.strip():
        return " ".join(value.split())  # SRI may list several hashes
    shasum = dist.get("shasum") if isinstance(dist, dict) else None
    if isinstance(shasum, str) and re.fullmatch(r"[0-9a-fA-F]{40}", shasum):
        return "sha1-" + base64.b64encode(bytes.fromhex(shasum)).decode()
    raise ArtifactStoreError(f"{label} gives no dist.integrity for '{wanted.identifier}'")


def _auth_hint(status: int) -> str | None:
    if status in (401, 403):
        return "set a token for this registry in .npmrc (//host/:_authToken=${NPM_TOKEN})"
    return None
