"""Registry package/remote + the user's inputs -> a fully rendered launch (command or url).

`choose` picks what to launch from a server.json, `render` turns it into a `Launch`, and
`render_custom` does the same for a server declared by hand in mcp.toml. The rules:

- Launchers: npm -> `npx -y [runtime] id@version [args]`; pypi -> `uvx [runtime] id==version
  [args]`; oci -> `docker run -i --rm [runtime] [-e VAR ...] image:tag [args]`; nuget ->
  `dnx [runtime] id@version --yes [-- args]`. The package's own `version` is used; when it is
  missing or `latest` the server's version stands in (publishers version both in lockstep).
  An oci identifier that already carries `:tag` or `@digest` is run as is, and that tag or
  digest is recorded as the package version.
- `runtimeHint` is a hint: the launcher always follows `registryType`, because npx, uvx,
  docker and dnx are what every target can run (a `bun` or `node` hint keeps npx).
- mcpb bundles have no launcher that runs them faithfully (the mcpb CLI packs, signs and
  verifies, it does not run), so they render with `command=None` plus the bundle URL and its
  `fileSha256`; targets that need a command refuse them by name.
- Values come first from mcp.toml `variables` (what the user wrote wins), then the registry's
  `value`, then its `default`. mcp.toml `args` take the place of the package's open
  positional arguments (those with no fixed value), or are appended.
- Environment: secrets and required variables render as `${NAME}` references, fixed registry
  values as themselves, optional ones are left out; mcp.toml `env` wins and may add more.
  Headers follow the same rules, with `${HEADER_NAME_AS_ENV}` as the reference.
- Everything from the registry is validated before it reaches an args list or a config:
  registry data that fails raises `UnsafeData`, user input that fails raises `InputError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcpsync.errors import InputError, UnsafeData


@dataclass(frozen=True)
class LaunchOptions:
    """What mcp.toml says about how to launch one server."""

    alias: str
    package: str | None = None  # npm | pypi | oci | nuget | mcpb | remote
    transport: str | None = None  # stdio | streamable-http | sse
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    variables: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Launch:
    """How to start or reach a server. Values of the form ${NAME} are references, not values."""

    transport: str  # stdio | streamable-http | sse
    registry_type: str | None = None  # npm | pypi | oci | nuget | mcpb | remote | None (custom)
    identifier: str | None = None
    package_version: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()  # names of env vars/references that hold secrets
    file_sha256: str | None = None  # mcpb bundles


LAUNCHABLE = ("npm", "pypi", "oci", "nuget")
TRANSPORTS = ("stdio", "streamable-http", "sse")
REMOTE_TRANSPORTS = ("streamable-http", "sse")

# The public default registries: a registryBaseUrl equal to one of these needs no flag.
_DEFAULT_REGISTRIES = {
    "npm": ("https://registry.npmjs.org",),
    "pypi": ("https://pypi.org", "https://pypi.org/simple"),
    "nuget": ("https://api.nuget.org/v3/index.json",),
}
_REGISTRY_FLAG = {"npm": "--registry", "pypi": "--index-url", "nuget": "--source"}

# `{name}` placeholders; `${NAME}` is an environment reference and is never a placeholder.
_PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z0-9_.-]+)\}")
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# What a shell would act on, if a client ever joins args into a command line.
_SHELL_UNSAFE = re.compile(r"[\s;&|$`<>(){}!\\'\"*?]|[\x00-\x1f\x7f]")
# Registry-specific name shapes: anything else (a URL, `file:`, `github:`, an npm alias) could
# make the launcher fetch code from somewhere other than the registry the lock names.
_IDENTIFIER = {
    "npm": re.compile(r"^(@[A-Za-z0-9][A-Za-z0-9._~-]*/)?[A-Za-z0-9._~-]+$"),
    "pypi": re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._,-]+\])?$"),
    "oci": re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@-]*$"),
    "nuget": re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$"),
}
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+~-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # RFC 9110 token
_URL_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f\"<>\\^`{|}]")
_SHA256 = re.compile(r"^[a-f0-9]{64}$")
_LINE_BREAK = re.compile(r"[\r\n\x00]")
_TOML_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


# ---------------------------------------------------------------------------------------------
# Context: who we are rendering, for every message


@dataclass(frozen=True)
class _Ctx:
    opts: LaunchOptions
    name: str

    @property
    def who(self) -> str:
        return f"Server '{self.opts.alias}' ({self.name})"

    def unsafe(self, what: str) -> UnsafeData:
        return UnsafeData(
            f"{self.who}: refusing registry data: {what}",
            hint="the registry's server.json for this version is unsafe or malformed; "
            "pin another version or declare the server with command/url in mcp.toml",
        )

    def user_error(self, what: str) -> InputError:
        return InputError(f"{self.who}: {what}")

    def missing(self, kind: str, key: str) -> InputError:
        alias, toml_key = self.opts.alias, _toml_key(key)
        return InputError(
            f"{self.who}: the registry requires {kind} '{key}' and gives no value; set it in "
            f'mcp.toml under [servers.{alias}] variables = {{ {toml_key} = "..." }}'
        )


def _context(server: Mapping[str, Any], opts: LaunchOptions) -> _Ctx:
    name = server.get("name") if isinstance(server, Mapping) else None
    ctx = _Ctx(opts, name if isinstance(name, str) else "?")
    if not isinstance(server, Mapping):
        raise ctx.unsafe("server.json is not an object")
    return ctx


def _toml_key(key: str) -> str:
    return key if _TOML_BARE_KEY.match(key) else json.dumps(key)


# ---------------------------------------------------------------------------------------------
# Lenient readers: real registry data is often off-schema, so read what we rely on and check it


def _text(ctx: _Ctx, obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):  # the schema says booleans become "true"/"false"
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    raise ctx.unsafe(f"'{key}' is not a string")


def _flag(obj: Mapping[str, Any], key: str) -> bool:
    return obj.get(key) is True


def _objects(ctx: _Ctx, obj: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, Mapping) for item in value):
        raise ctx.unsafe(f"'{key}' is not a list of objects")
    return value


def _declared(ctx: _Ctx, obj: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
    value = obj.get("variables")
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(v, Mapping) for v in value.values()):
        raise ctx.unsafe("'variables' is not a map of objects")
    return value


def _transport_type(obj: Mapping[str, Any]) -> str:
    transport = obj.get("transport")
    if transport is None:
        return "stdio"  # off-schema packages without a transport are stdio in practice
    kind = transport.get("type") if isinstance(transport, Mapping) else None
    return kind if isinstance(kind, str) else "?"


# ---------------------------------------------------------------------------------------------
# Validation of untrusted data


def _check_token(ctx: _Ctx, value: str | None, what: str, shape: re.Pattern[str]) -> str:
    """Identifiers and versions: one plain word that no shell or option parser misreads."""
    if not value:
        raise ctx.unsafe(f"{what} is empty")
    if value.startswith("-") or _SHELL_UNSAFE.search(value):
        raise ctx.unsafe(f"{what} {value!r} starts with '-' or holds whitespace/shell characters")
    if not shape.match(value):
        raise ctx.unsafe(f"{what} {value!r} is not a plain registry name or version")
    return value


def _url_problem(url: str) -> str | None:
    if _URL_UNSAFE.search(_REFERENCE.sub("", url)):
        return "holds whitespace or characters not allowed in a URL"
    try:
        parts = urlsplit(url)
        host, _ = parts.hostname, parts.port  # .port raises on a malformed port
    except ValueError:
        return "is malformed"
    if "@" in parts.netloc:
        return "carries a user name or password"
    scheme = parts.scheme.lower()
    if not host or scheme not in ("https", "http"):
        return "is not an http(s) URL with a host"
    if scheme == "http" and host not in _LOCAL_HOSTS:
        return "uses plain http to a host other than localhost"
    return None


def _check_url(ctx: _Ctx, url: str, what: str, *, from_user: bool = False) -> str:
    problem = _url_problem(url)
    if problem is None:
        return url
    message = f"{what} {url!r} {problem}"
    raise ctx.user_error(message) if from_user else ctx.unsafe(message)


def _check_env_name(ctx: _Ctx, name: str | None, *, from_user: bool = False) -> str:
    if name and _ENV_NAME.match(name):
        return name
    message = f"environment variable name {name!r} is not a valid name"
    raise ctx.user_error(message) if from_user else ctx.unsafe(message)


def _check_header(ctx: _Ctx, name: str | None, value: str, *, from_user: bool = False) -> str:
    if not name or not _HEADER_NAME.match(name):
        message = f"header name {name!r} is not a valid HTTP header name"
    elif _LINE_BREAK.search(value):
        message = f"header {name!r} has a line break or NUL in its value"
    else:
        return name
    raise ctx.user_error(message) if from_user else ctx.unsafe(message)


def _check_args(ctx: _Ctx, args: Sequence[str]) -> tuple[str, ...]:
    """Args go into an argv list (no shell), but a line break or NUL never belongs there."""
    for arg in args:
        if _LINE_BREAK.search(arg):
            raise ctx.unsafe(f"argument {arg!r} holds a line break or NUL")
    return tuple(args)


def _check_user_inputs(ctx: _Ctx) -> None:
    """mcp.toml values reach argv and configs too: no line breaks or NUL there either.
    Checked first, so a later failure is the registry's."""
    opts = ctx.opts
    values = [*opts.args, *opts.variables.values(), *opts.env.values(), *opts.headers.values()]
    bad = next((value for value in values if _LINE_BREAK.search(value)), None)
    if bad is not None:
        raise ctx.user_error(f"the value {bad!r} in mcp.toml holds a line break or NUL")


def _require_reference(ctx: _Ctx, key: str, value: str) -> None:
    """A secret may only be written as a ${NAME} reference, never as a literal."""
    if not _REFERENCE.search(value):
        raise ctx.user_error(
            f"'{key}' is a secret; secrets are never written as values; use "
            f'"${{{_env_name(key)}}}" and set {_env_name(key)} in the environment'
        )


def _env_name(name: str) -> str:
    """A header or variable name as an environment variable name: X-API-Key -> X_API_KEY."""
    env = re.sub(r"[^A-Za-z0-9]", "_", name).upper()
    return env if env and not env[0].isdigit() else f"_{env}"


def _ref(name: str) -> str:
    return f"${{{name}}}"


# ---------------------------------------------------------------------------------------------
# choose: which package or remote to launch


def choose(server: Mapping[str, Any], opts: LaunchOptions) -> tuple[str, Mapping[str, Any]]:
    """Pick ("package", pkg) or ("remote", remote) for `server`, honouring opts.package/transport.

    Without a preference: the first package mcpsync can launch, else the first remote, else
    the first package (an mcpb bundle, say). Raises InputError when nothing matches."""
    ctx = _context(server, opts)
    packages = _objects(ctx, server, "packages")
    remotes = _objects(ctx, server, "remotes")
    candidates = _candidates(packages, remotes, opts)
    if candidates:
        return candidates[0]
    raise _no_match(ctx, packages, remotes)


def _candidates(
    packages: list[Mapping[str, Any]], remotes: list[Mapping[str, Any]], opts: LaunchOptions
) -> list[tuple[str, Mapping[str, Any]]]:
    def wanted(kind: str, transport: str) -> bool:
        return opts.package in (None, kind) and opts.transport in (None, transport)

    pkgs = [p for p in packages if wanted(str(p.get("registryType")), _transport_type(p))]
    rems = [r for r in remotes if wanted("remote", str(r.get("type")))]
    launchable = [p for p in pkgs if p.get("registryType") in LAUNCHABLE]
    return (
        [("package", p) for p in launchable]
        + [("remote", r) for r in rems]
        + [("package", p) for p in pkgs]
    )


def _no_match(
    ctx: _Ctx, packages: list[Mapping[str, Any]], remotes: list[Mapping[str, Any]]
) -> InputError:
    offers = [f"{p.get('registryType')} ({_transport_type(p)})" for p in packages]
    offers += [f"remote {r.get('type')}" for r in remotes]
    asked = [f'{key} = "{value}"' for key, value in _preferences(ctx.opts) if value]
    if not asked:
        return InputError(
            f"{ctx.who}: the registry lists no package or remote to launch",
            hint=f"declare it with command/url under [servers.{ctx.opts.alias}] in mcp.toml",
        )
    return InputError(
        f"{ctx.who}: nothing matches {', '.join(asked)}; offers: {', '.join(offers) or 'nothing'}",
        hint=f"change package/transport under [servers.{ctx.opts.alias}] in mcp.toml",
    )


def _preferences(opts: LaunchOptions) -> tuple[tuple[str, str | None], ...]:
    return (("package", opts.package), ("transport", opts.transport))


# ---------------------------------------------------------------------------------------------
# render: the chosen package or remote as a Launch


def render(server: Mapping[str, Any], opts: LaunchOptions) -> Launch:
    """Render the launch for `server` (a server.json) as mcp.toml's `opts` ask."""
    ctx = _context(server, opts)
    _check_user_inputs(ctx)
    kind, entry = choose(server, opts)
    if kind == "remote":
        return _render_remote(ctx, entry)
    registry_type = _text(ctx, entry, "registryType")
    if registry_type == "mcpb":
        return _render_mcpb(ctx, server, entry)
    if registry_type not in LAUNCHABLE:
        raise InputError(
            f"{ctx.who}: registry type '{registry_type}' has no launcher in mcpsync "
            f"(it launches {', '.join(LAUNCHABLE)} packages and remotes)",
            hint=f"declare it with command/args under [servers.{opts.alias}] in mcp.toml",
        )
    return _render_package(ctx, server, entry, registry_type)


def render_custom(opts: LaunchOptions, *, command: str | None, url: str | None) -> Launch:
    """A server declared in mcp.toml itself: command/args/env, or url/headers (or both, for a
    local command serving HTTP). Transport defaults: stdio for a command, streamable-http for
    a url. Values are the user's own, so failures are InputError, not UnsafeData."""
    ctx = _Ctx(opts, "declared in mcp.toml")
    transport = opts.transport or ("streamable-http" if url else "stdio")
    _check_user_inputs(ctx)
    _check_custom_shape(ctx, command, url, transport)
    env = _user_env(ctx)
    headers = {_check_header(ctx, k, v, from_user=True): v for k, v in opts.headers.items()}
    return Launch(
        transport=transport,
        command=command,
        args=opts.args if command else (),
        env=env,
        url=_check_url(ctx, url, "url", from_user=True) if url else None,
        headers=headers,
        secrets=_reference_secrets(env, headers.values()),
    )


def _check_custom_shape(ctx: _Ctx, command: str | None, url: str | None, transport: str) -> None:
    if not command and not url:
        raise ctx.user_error("declares neither command nor url")
    if transport not in TRANSPORTS:
        raise ctx.user_error(f"transport '{transport}' is not one of {', '.join(TRANSPORTS)}")
    if url and transport == "stdio":
        raise ctx.user_error("a url needs transport streamable-http or sse, not stdio")
    if command and not url and transport != "stdio":
        raise ctx.user_error(f"transport '{transport}' needs a url; a command alone is stdio")
    if command and (command.strip() != command or _LINE_BREAK.search(command)):
        raise ctx.user_error(f"command {command!r} has surrounding spaces or a line break")
    if url is None and ctx.opts.headers:
        raise ctx.user_error("headers apply to a url, and this server has none")
    if command is None and (ctx.opts.args or ctx.opts.env):
        raise ctx.user_error("args and env apply to a command, and this server has none")


def _reference_secrets(env: Mapping[str, str], header_values: Iterable[str]) -> tuple[str, ...]:
    """For custom servers: what the user wrote as ${NAME} is what they keep out of files."""
    names = [key for key, value in env.items() if _REFERENCE.search(value)]
    names += [name for value in header_values for name in _REFERENCE.findall(value)]
    return tuple(dict.fromkeys(names))


# ---------------------------------------------------------------------------------------------
# Packages


@dataclass(frozen=True)
class _Rendered:
    """A package's pieces once every input is resolved."""

    identifier: str
    version: str
    runtime: tuple[str, ...]
    package: tuple[str, ...]  # package arguments, with the user's args in place
    env: Mapping[str, str]
    registry_flags: tuple[str, ...]


def _render_package(
    ctx: _Ctx, server: Mapping[str, Any], pkg: Mapping[str, Any], registry_type: str
) -> Launch:
    identifier = _check_token(
        ctx, _text(ctx, pkg, "identifier"), "package identifier", _IDENTIFIER[registry_type]
    )
    env, secrets, env_values = _render_env(ctx, pkg)
    runtime, runtime_values = _render_arguments(ctx, _objects(ctx, pkg, "runtimeArguments"), ())
    package, package_values = _render_arguments(
        ctx, _objects(ctx, pkg, "packageArguments"), ctx.opts.args
    )
    parts = _Rendered(
        identifier=identifier,
        version=_package_version(ctx, server, pkg),
        runtime=tuple(runtime),
        package=tuple(package),
        env=env,
        registry_flags=_registry_flags(ctx, pkg, registry_type),
    )
    command, args, version = _LAUNCHERS[registry_type](parts)
    lookup = {**env_values, **runtime_values, **package_values}
    transport, url, headers, header_secrets = _package_transport(ctx, pkg, lookup)
    return Launch(
        transport=transport,
        registry_type=registry_type,
        identifier=identifier,
        package_version=version,
        command=command,
        args=_check_args(ctx, args),
        env=env,
        url=url,
        headers=headers,
        secrets=tuple(dict.fromkeys([*secrets, *header_secrets])),
        file_sha256=_sha256(ctx, pkg, required=False),
    )


def _package_version(ctx: _Ctx, server: Mapping[str, Any], pkg: Mapping[str, Any]) -> str:
    """The package's own version; the server's when the package omits it or says `latest`."""
    version = _text(ctx, pkg, "version")
    if not version or version == "latest":
        version = _text(ctx, server, "version")
    return _check_token(ctx, version, "version", _VERSION)


def _registry_flags(ctx: _Ctx, pkg: Mapping[str, Any], registry_type: str) -> tuple[str, ...]:
    """A package from a non-default registry must be fetched from there, not the default."""
    base = _text(ctx, pkg, "registryBaseUrl")
    flag = _REGISTRY_FLAG.get(registry_type)
    if not base or flag is None or base.rstrip("/") in _DEFAULT_REGISTRIES[registry_type]:
        return ()
    return (flag, _check_url(ctx, base, "registryBaseUrl"))


def _npm(p: _Rendered) -> tuple[str, list[str], str]:
    spec = f"{p.identifier}@{p.version}"
    return "npx", ["-y", *p.registry_flags, *p.runtime, spec, *p.package], p.version


def _pypi(p: _Rendered) -> tuple[str, list[str], str]:
    spec = f"{p.identifier}=={p.version}"
    return "uvx", [*p.registry_flags, *p.runtime, spec, *p.package], p.version


def _oci(p: _Rendered) -> tuple[str, list[str], str]:
    # Every variable in the rendered env is passed through by name, so values stay out of argv.
    passthrough = [item for name in p.env for item in ("-e", name)]
    pinned = _oci_pin(p.identifier)
    image = p.identifier if pinned else f"{p.identifier}:{p.version}"
    args = ["run", "-i", "--rm", *p.runtime, *passthrough, image, *p.package]
    return "docker", args, pinned or p.version


def _oci_pin(identifier: str) -> str | None:
    """The tag or digest an image reference already carries (`:tag` in its last segment)."""
    if "@" in identifier:
        return identifier.split("@", 1)[1]
    last = identifier.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def _nuget(p: _Rendered) -> tuple[str, list[str], str]:
    # dnx <id>@<version> --yes [-- args]: --yes accepts the download non-interactively, and
    # `--` keeps the server's own flags away from dnx (as NuGet's and VS Code's configs do).
    tail = ["--", *p.package] if p.package else []
    spec = f"{p.identifier}@{p.version}"
    return "dnx", [*p.runtime, spec, "--yes", *p.registry_flags, *tail], p.version


_LAUNCHERS = {"npm": _npm, "pypi": _pypi, "oci": _oci, "nuget": _nuget}


def _package_transport(
    ctx: _Ctx, pkg: Mapping[str, Any], lookup: Mapping[str, str]
) -> tuple[str, str | None, dict[str, str], tuple[str, ...]]:
    """stdio, or a local HTTP server whose url may name arguments and env vars: {--port}."""
    kind = _local_transport(ctx, pkg)
    if kind == "stdio":
        if ctx.opts.headers:
            raise ctx.user_error("headers apply to HTTP transports; this package uses stdio")
        return kind, None, {}, ()
    transport = pkg["transport"]
    url = _render_url(ctx, transport, {}, lookup)
    headers, secrets = _render_headers(ctx, transport, {}, lookup)
    return kind, url, headers, secrets


def _local_transport(ctx: _Ctx, pkg: Mapping[str, Any]) -> str:
    kind = _transport_type(pkg)
    if kind not in TRANSPORTS:
        raise ctx.unsafe(f"package transport {kind!r} is not one of {', '.join(TRANSPORTS)}")
    return kind


def _render_mcpb(ctx: _Ctx, server: Mapping[str, Any], pkg: Mapping[str, Any]) -> Launch:
    """No faithful launcher exists for a bundle: record what to fetch and how to verify it."""
    if ctx.opts.args:
        raise ctx.user_error("args need a launcher, and an mcpb bundle has none in mcpsync")
    identifier = _check_url(ctx, _text(ctx, pkg, "identifier") or "", "mcpb identifier")
    env, secrets, _ = _render_env(ctx, pkg)
    return Launch(
        transport=_local_transport(ctx, pkg),
        registry_type="mcpb",
        identifier=identifier,
        package_version=_package_version(ctx, server, pkg),
        env=env,
        secrets=secrets,
        file_sha256=_sha256(ctx, pkg, required=True),
    )


def _sha256(ctx: _Ctx, pkg: Mapping[str, Any], *, required: bool) -> str | None:
    digest = _text(ctx, pkg, "fileSha256")
    if digest is None and not required:
        return None
    if digest is None or not _SHA256.match(digest.lower()):
        raise ctx.unsafe(f"fileSha256 {digest!r} is not a SHA-256 hex digest")
    return digest.lower()


# ---------------------------------------------------------------------------------------------
# Arguments


def _render_arguments(
    ctx: _Ctx, specs: list[Mapping[str, Any]], extra: tuple[str, ...]
) -> tuple[list[str], dict[str, str]]:
    """Render argument specs in order; return the args and each resolved value by key
    (valueHint, name, name without dashes) for {placeholders} in a package transport url.

    `extra` (mcp.toml args) takes the place of the first open positional slot, one with no
    fixed value and no mcp.toml variable, and every other open slot is left to it too;
    without an open slot `extra` is appended."""
    args: list[str] = []
    values: dict[str, str] = {}
    placed = not extra
    for spec in specs:
        if extra and _is_open_slot(ctx, spec):
            args.extend(() if placed else extra)
            placed = True
            continue
        rendered, value, keys = _render_argument(ctx, spec)
        args.extend(rendered)
        values.update({key: value for key in keys if value is not None})
    return args if placed else [*args, *extra], values


def _is_open_slot(ctx: _Ctx, spec: Mapping[str, Any]) -> bool:
    if _argument_kind(ctx, spec) != "positional" or spec.get("value") is not None:
        return False
    return _text(ctx, spec, "valueHint") not in ctx.opts.variables


def _argument_kind(ctx: _Ctx, spec: Mapping[str, Any]) -> str:
    # Off-schema entries with an empty or missing type are read by shape.
    kind = _text(ctx, spec, "type") or ("named" if spec.get("name") else "positional")
    if kind not in ("positional", "named"):
        raise ctx.unsafe(f"argument type {kind!r} is neither positional nor named")
    return kind


def _render_argument(
    ctx: _Ctx, spec: Mapping[str, Any]
) -> tuple[list[str], str | None, tuple[str, ...]]:
    """One argument: (its args, its resolved value, the keys it answers to)."""
    hint = _text(ctx, spec, "valueHint")
    keys: tuple[str, ...]
    if _argument_kind(ctx, spec) == "positional":
        keys = (hint,) if hint else ()
        value = _argument_value(ctx, spec, keys)
        if value is None and _flag(spec, "isRequired"):
            raise ctx.missing("argument", hint or "positional argument")
        return ([] if value is None else [value]), value, keys
    name = _text(ctx, spec, "name") or ""
    if not name or _SHELL_UNSAFE.search(name):
        raise ctx.unsafe(f"argument name {name!r} is empty or holds whitespace/shell characters")
    keys = tuple(dict.fromkeys(k for k in (hint, name.lstrip("-"), name) if k))
    value = _argument_value(ctx, spec, keys)
    return _named(ctx, spec, name, value, keys[0]), value, keys


def _named(ctx: _Ctx, spec: Mapping[str, Any], name: str, value: str | None, key: str) -> list[str]:
    """`--name value` as two args. A boolean is a presence flag: true -> `--name`, false ->
    nothing. A named argument with no value anywhere is left out unless it is required."""
    required = _flag(spec, "isRequired")
    if _text(ctx, spec, "format") == "boolean":
        if value is None:
            return [name] if required else []
        if value.lower() in ("true", "false"):
            return [name] if value.lower() == "true" else []
    if value is None:
        if required:
            raise ctx.missing("argument", key)
        return []
    return [name, value]


def _argument_value(ctx: _Ctx, spec: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    """mcp.toml variables first, then the registry's value, then its default; {placeholders}
    filled from the argument's variables. None means leave the argument out."""
    user = next((ctx.opts.variables[k] for k in keys if k in ctx.opts.variables), None)
    if user is not None:
        if _flag(spec, "isSecret"):
            _require_reference(ctx, keys[0] if keys else "argument", user)
        return user
    for key in ("value", "default"):
        template = _text(ctx, spec, key)
        if template is not None:
            return _fill_argument(ctx, spec, template)
    return None


def _fill_argument(ctx: _Ctx, spec: Mapping[str, Any], template: str) -> str | None:
    declared = _declared(ctx, spec)
    text, missing = _fill(ctx, template, declared, {})
    # Undeclared {braces} stay as they are (the schema's rule); declared ones must resolve.
    unresolved = [key for key in missing if key in declared]
    if not unresolved:
        return text
    for key in unresolved:
        if _flag(declared[key], "isRequired") or _flag(spec, "isRequired"):
            raise ctx.missing("variable", key)
    return None  # an optional argument whose optional variable has no value: leave it out


def _fill(
    ctx: _Ctx,
    template: str,
    declared: Mapping[str, Mapping[str, Any]],
    lookup: Mapping[str, str],
) -> tuple[str, list[str]]:
    """Fill {placeholders}: mcp.toml variables, then the declared variable's value/default,
    then `lookup`. Returns the text (unresolved placeholders left as written) and their names."""
    missing: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        key = match.group(1)
        value = _variable(ctx, key, declared.get(key), lookup)
        if value is None:
            missing.append(key)
            return match.group(0)
        return value

    return _PLACEHOLDER.sub(substitute, template), missing


def _variable(
    ctx: _Ctx, key: str, spec: Mapping[str, Any] | None, lookup: Mapping[str, str]
) -> str | None:
    user = ctx.opts.variables.get(key)
    if user is not None:
        if spec is not None and _flag(spec, "isSecret"):
            _require_reference(ctx, key, user)
        return user
    if spec is not None:
        for field_name in ("value", "default"):
            value = _text(ctx, spec, field_name)
            if value is not None:
                return value
    return lookup.get(key)


# ---------------------------------------------------------------------------------------------
# Environment


def _render_env(
    ctx: _Ctx, pkg: Mapping[str, Any]
) -> tuple[dict[str, str], tuple[str, ...], dict[str, str]]:
    """(env, names of secret vars, literal values by name for {placeholders} in a url)."""
    env: dict[str, str] = {}
    secrets: list[str] = []
    values: dict[str, str] = {}
    for spec in _objects(ctx, pkg, "environmentVariables"):
        name = _check_env_name(ctx, _text(ctx, spec, "name"))
        if _flag(spec, "isSecret"):
            secrets.append(name)
        value = _env_value(ctx, spec, name)
        if value is not None:
            env[name] = value
        literal = value if value is not None else _text(ctx, spec, "default")
        if literal is not None and not _REFERENCE.search(literal):
            values[name] = literal
    env.update({k: v for k, v in _user_env(ctx).items() if k not in env})
    for name, value in env.items():
        if _LINE_BREAK.search(value):
            raise ctx.unsafe(f"environment variable {name} has a line break or NUL in its value")
    return env, tuple(secrets), values


def _env_value(ctx: _Ctx, spec: Mapping[str, Any], name: str) -> str | None:
    """mcp.toml env wins; a secret is always a reference; a fixed registry value is part of
    the recipe; a required variable becomes a reference; an optional one is left out."""
    required, secret = _flag(spec, "isRequired"), _flag(spec, "isSecret")
    user = ctx.opts.env.get(name)
    if user is not None:
        if secret:
            _require_reference(ctx, name, user)
        return user
    if secret:
        return _ref(name)
    template = _text(ctx, spec, "value")
    if template is not None:
        text, missing = _fill(ctx, template, _declared(ctx, spec), {})
        if not missing:
            return text
    return _ref(name) if required else None


def _user_env(ctx: _Ctx) -> dict[str, str]:
    return {_check_env_name(ctx, k, from_user=True): v for k, v in ctx.opts.env.items()}


# ---------------------------------------------------------------------------------------------
# Remotes, urls and headers


def _render_remote(ctx: _Ctx, remote: Mapping[str, Any]) -> Launch:
    kind = _text(ctx, remote, "type") or ""
    if kind not in REMOTE_TRANSPORTS:
        raise ctx.unsafe(f"remote type {kind!r} is not one of {', '.join(REMOTE_TRANSPORTS)}")
    if ctx.opts.args or ctx.opts.env:
        raise ctx.user_error(
            "args and env apply to packages; a remote takes variables and headers",
        )
    declared = _declared(ctx, remote)
    headers, secrets = _render_headers(ctx, remote, declared, {})
    return Launch(
        transport=kind,
        registry_type="remote",
        url=_render_url(ctx, remote, declared, {}),
        headers=headers,
        secrets=secrets,
    )


def _render_url(
    ctx: _Ctx,
    transport: Mapping[str, Any],
    declared: Mapping[str, Mapping[str, Any]],
    lookup: Mapping[str, str],
) -> str:
    """Fill every {placeholder} (a url cannot keep one), then validate the result."""
    template = _text(ctx, transport, "url")
    if not template:
        raise ctx.unsafe("an HTTP transport has no url")
    url, missing = _fill(ctx, template, declared, lookup)
    if missing:
        raise ctx.missing("variable", missing[0])
    return _check_url(ctx, url, "url")


def _render_headers(
    ctx: _Ctx,
    transport: Mapping[str, Any],
    declared: Mapping[str, Mapping[str, Any]],
    lookup: Mapping[str, str],
) -> tuple[dict[str, str], tuple[str, ...]]:
    """(headers, names of the references that hold secrets). Header names match mcp.toml's
    case-insensitively, as HTTP does."""
    user = {name.lower(): (name, value) for name, value in ctx.opts.headers.items()}
    headers: dict[str, str] = {}
    secrets: list[str] = []
    for spec in _objects(ctx, transport, "headers"):
        name = _check_header(ctx, _text(ctx, spec, "name"), "")
        given = user.pop(name.lower(), None)
        value = _header_value(ctx, spec, name, given, {**declared, **_declared(ctx, spec)}, lookup)
        if value is None:
            continue
        headers[_check_header(ctx, name, value, from_user=given is not None)] = value
        if _flag(spec, "isSecret"):
            secrets.extend(_REFERENCE.findall(value))
    for name, value in user.values():
        headers[_check_header(ctx, name, value, from_user=True)] = value
    return headers, tuple(dict.fromkeys(secrets))


def _header_value(
    ctx: _Ctx,
    spec: Mapping[str, Any],
    name: str,
    given: tuple[str, str] | None,
    declared: Mapping[str, Mapping[str, Any]],
    lookup: Mapping[str, str],
) -> str | None:
    required, secret = _flag(spec, "isRequired"), _flag(spec, "isSecret")
    if given is not None:
        if secret:
            _require_reference(ctx, name, given[1])
        return given[1]
    template = _text(ctx, spec, "value")
    if secret:
        return _secret_template(ctx, template, name)
    if template is not None:
        text, missing = _fill(ctx, template, declared, lookup)
        if not missing:
            return text
    return _ref(_env_name(name)) if required else None


def _secret_template(ctx: _Ctx, template: str | None, name: str) -> str:
    """A secret header keeps the registry's wording ("Bearer {token}") with every placeholder
    as a reference ("Bearer ${TOKEN}"); without placeholders it is one reference."""
    if template is None or not _PLACEHOLDER.search(template):
        return _ref(_env_name(name))

    def substitute(match: re.Match[str]) -> str:
        key = match.group(1)
        user = ctx.opts.variables.get(key)
        if user is None:
            return _ref(_env_name(key))
        _require_reference(ctx, key, user)
        return user

    return _PLACEHOLDER.sub(substitute, template)
