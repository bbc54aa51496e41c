"""choose and render: a server.json, or a server declared in mcp.toml, as a `Launch`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from msgspec import Struct

from mcpsync.errors import InputError
from mcpsync.launch.checks import (
    REFERENCE,
    Ctx,
    check_args,
    check_custom_shape,
    check_docker_runtime,
    check_header,
    check_identifier,
    check_sha256,
    check_url,
    check_user_inputs,
    check_version,
    declared_variables,
    field_objects,
    field_text,
    server_context,
    transport_type,
)
from mcpsync.launch.model import (
    LATEST,
    LAUNCHABLE,
    REMOTE_TRANSPORTS,
    TRANSPORTS,
    Launch,
    LaunchOptions,
)
from mcpsync.launch.values import (
    UnusedInput,
    render_arguments,
    render_env,
    render_headers,
    render_url,
    unused_keys,
    user_env,
)

# The public default registries: a registryBaseUrl equal to one of these needs no flag.
_DEFAULT_REGISTRIES = {
    "npm": ("https://registry.npmjs.org",),
    "pypi": ("https://pypi.org", "https://pypi.org/simple"),
    "nuget": ("https://api.nuget.org/v3/index.json",),
}
_REGISTRY_FLAG = {"npm": "--registry", "pypi": "--index-url", "nuget": "--source"}


# ---------------------------------------------------------------------------------------------
# choose: which package or remote to launch


def choose(server: Mapping[str, Any], opts: LaunchOptions) -> tuple[str, Mapping[str, Any]]:
    """Pick ("package", pkg) or ("remote", remote) for `server`, honouring opts.package/transport.

    Without a preference: the first package mcpsync can launch, else the first remote, else
    the first package (an mcpb bundle, say). Raises InputError when nothing matches."""
    ctx = server_context(server, opts)
    packages = field_objects(ctx, server, "packages")
    remotes = field_objects(ctx, server, "remotes")
    candidates = _candidates(packages, remotes, opts)
    if candidates:
        return candidates[0]
    raise _no_match(ctx, packages, remotes)


def _candidates(
    packages: list[Mapping[str, Any]], remotes: list[Mapping[str, Any]], opts: LaunchOptions
) -> list[tuple[str, Mapping[str, Any]]]:
    def wanted(kind: str, transport: str) -> bool:
        return opts.package in (None, kind) and opts.transport in (None, transport)

    pkgs = [p for p in packages if wanted(str(p.get("registryType")), transport_type(p))]
    rems = [r for r in remotes if wanted("remote", str(r.get("type")))]
    launchable = [p for p in pkgs if p.get("registryType") in LAUNCHABLE]
    return (
        [("package", p) for p in launchable]
        + [("remote", r) for r in rems]
        + [("package", p) for p in pkgs]
    )


def _no_match(
    ctx: Ctx, packages: list[Mapping[str, Any]], remotes: list[Mapping[str, Any]]
) -> InputError:
    offers = [f"{p.get('registryType')} ({transport_type(p)})" for p in packages]
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


def render(
    server: Mapping[str, Any],
    opts: LaunchOptions,
    *,
    image_digest: str | None = None,
    package_version: str | None = None,
) -> Launch:
    """Render the launch for `server` (a server.json) as mcp.toml's `opts` ask.

    `image_digest` ("sha256:…", the manifest digest recorded in mcp.lock) pins an OCI image:
    docker then runs `image:tag@sha256:…`, exactly those bytes. Other launches ignore it.
    `package_version`: the version a package whose server.json says `latest` is pinned to
    (its store's current version at lock time); without it such a launch names `latest`."""
    ctx = server_context(server, opts)
    check_user_inputs(ctx)
    kind, entry = choose(server, opts)
    if kind == "remote":
        return _render_remote(ctx, entry)
    registry_type = field_text(ctx, entry, "registryType")
    if registry_type == "mcpb":
        return _render_mcpb(ctx, server, entry)
    if registry_type not in LAUNCHABLE:
        raise InputError(
            f"{ctx.who}: registry type '{registry_type}' has no launcher in mcpsync "
            f"(it launches {', '.join(LAUNCHABLE)} packages and remotes)",
            hint=f"declare it with command/args under [servers.{opts.alias}] in mcp.toml",
        )
    return _render_package(ctx, server, entry, registry_type, image_digest, package_version)


def unused_inputs(server: Mapping[str, Any], opts: LaunchOptions) -> list[UnusedInput]:
    """mcp.toml `env`/`variables` keys that what `render` launches never reads (see
    values.unused_keys); call it after `render` succeeded."""
    ctx = server_context(server, opts)
    kind, entry = choose(server, opts)
    try:
        return unused_keys(ctx, kind, entry)
    except InputError:  # data render() did not need (an mcpb's arguments): no advice, no failure
        return []


def argument_notes(server: Mapping[str, Any], opts: LaunchOptions) -> list[str]:
    """The arguments of the package `render` chooses whose command line the server.json schema
    leaves open, one sentence each, for lock to warn about. mcpsync renders a named argument
    as two words, `NAME VALUE`, with NAME as given: the schema says `name` includes its leading
    dashes, while it also calls a named argument "`--flag={value}`".

    Nothing to launch is render's error to report, not a note's: no notes then."""
    try:
        kind, entry = choose(server, opts)
    except InputError:
        return []
    if kind == "remote":
        return []
    notes = []
    for key in ("runtimeArguments", "packageArguments"):
        specs = entry.get(key)
        for spec in specs if isinstance(specs, list) else []:
            note = _argument_note(spec, key) if isinstance(spec, Mapping) else None
            if note is not None:
                notes.append(note)
    return notes


def _argument_note(spec: Mapping[str, Any], key: str) -> str | None:
    name, kind = spec.get("name"), spec.get("type")
    if kind not in ("named", "positional"):
        shape = "named" if name else "positional"
        return f"an argument in {key} has no `type`; it is read as {shape} from its shape"
    if kind != "named" or not isinstance(name, str) or not name:
        return None
    if not name.startswith("-"):
        return (
            f"named argument {name!r} ({key}) has no leading dash; as the schema says `name` "
            f"includes its dashes, it is passed as `{name} VALUE`, not `--{name} VALUE`"
        )
    if name.endswith("="):
        return (
            f"named argument {name!r} ({key}) ends in '='; it is passed as `{name} VALUE` "
            "(two words), which a server expecting one word will not read"
        )
    return None


def render_custom(opts: LaunchOptions, *, command: str | None, url: str | None) -> Launch:
    """A server declared in mcp.toml itself: command/args/env, or url/headers (or both, for a
    local command serving HTTP). Transport defaults: stdio for a command, streamable-http for
    a url. Values are the user's own, so failures are InputError, not UnsafeData."""
    ctx = Ctx(opts, "declared in mcp.toml")
    transport = opts.transport or ("streamable-http" if url else "stdio")
    check_user_inputs(ctx)
    check_custom_shape(ctx, command, url, transport)
    env = user_env(ctx)
    headers = {check_header(ctx, k, v, from_user=True): v for k, v in opts.headers.items()}
    return Launch(
        transport=transport,
        command=command,
        args=opts.args if command else (),
        env=env,
        url=check_url(ctx, url, "url", from_user=True) if url else None,
        headers=headers,
        secrets=_reference_secrets(env, headers.values()),
    )


def _reference_secrets(env: Mapping[str, str], header_values: Iterable[str]) -> tuple[str, ...]:
    """For custom servers: what the user wrote as ${NAME} is what they keep out of files."""
    names = [key for key, value in env.items() if REFERENCE.search(value)]
    names += [name for value in header_values for name in REFERENCE.findall(value)]
    return tuple(dict.fromkeys(names))


# ---------------------------------------------------------------------------------------------
# Packages


class _Rendered(Struct, frozen=True):
    """A package's pieces once every input is resolved."""

    identifier: str
    version: str
    runtime: tuple[str, ...]
    package: tuple[str, ...]  # package arguments, with the user's args in place
    env: Mapping[str, str]
    registry_flags: tuple[str, ...]
    image_digest: str | None = None


def _render_package(
    ctx: Ctx,
    server: Mapping[str, Any],
    pkg: Mapping[str, Any],
    registry_type: str,
    image_digest: str | None = None,
    package_version: str | None = None,
) -> Launch:
    identifier = check_identifier(ctx, field_text(ctx, pkg, "identifier"), registry_type)
    env, secrets, env_values, optional = render_env(ctx, pkg)
    runtime, runtime_values = render_arguments(ctx, field_objects(ctx, pkg, "runtimeArguments"), ())
    if registry_type == "oci":
        check_docker_runtime(ctx, runtime)
    package, package_values = render_arguments(
        ctx, field_objects(ctx, pkg, "packageArguments"), ctx.opts.args
    )
    parts = _Rendered(
        identifier=identifier,
        version=_package_version(ctx, server, pkg, package_version),
        runtime=tuple(runtime),
        package=tuple(package),
        env=env,
        registry_flags=_registry_flags(ctx, pkg, registry_type),
        image_digest=image_digest,
    )
    command, args, version = _LAUNCHERS[registry_type](parts)
    lookup = {**env_values, **runtime_values, **package_values}
    transport, url, headers, header_secrets, header_optional = _package_transport(ctx, pkg, lookup)
    return Launch(
        transport=transport,
        registry_type=registry_type,
        identifier=identifier,
        package_version=version,
        command=command,
        args=check_args(ctx, args),
        env=env,
        url=url,
        headers=headers,
        secrets=tuple(dict.fromkeys([*secrets, *header_secrets])),
        optional=tuple(dict.fromkeys([*optional, *header_optional])),
        file_sha256=check_sha256(ctx, field_text(ctx, pkg, "fileSha256"), required=False),
    )


def _package_version(
    ctx: Ctx, server: Mapping[str, Any], pkg: Mapping[str, Any], pinned: str | None = None
) -> str:
    """The package's own version; the server's when the package omits it. One that says
    `latest` (off-schema, but real) is no version: `pinned` (what lock resolved it to) stands
    in, else it stays LATEST, which lock resolves or refuses; the server's version may not
    exist in the package's store at all."""
    version = field_text(ctx, pkg, "version")
    if not version:
        version = field_text(ctx, server, "version")
    elif version == LATEST:
        version = pinned or LATEST
    return check_version(ctx, version)


def _registry_flags(ctx: Ctx, pkg: Mapping[str, Any], registry_type: str) -> tuple[str, ...]:
    """A package from a non-default registry must be fetched from there, not the default."""
    base = field_text(ctx, pkg, "registryBaseUrl")
    flag = _REGISTRY_FLAG.get(registry_type)
    if not base or flag is None or base.rstrip("/") in _DEFAULT_REGISTRIES[registry_type]:
        return ()
    return (flag, check_url(ctx, base, "registryBaseUrl"))


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
    if p.image_digest and "@" not in image:  # an identifier's own @digest already pins it
        image = f"{image}@{p.image_digest}"
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
    ctx: Ctx, pkg: Mapping[str, Any], lookup: Mapping[str, str]
) -> tuple[str, str | None, dict[str, str], tuple[str, ...], tuple[str, ...]]:
    """stdio, or a local HTTP server whose url may name arguments and env vars: {--port}.
    (transport, url, headers, secret references, optional references)"""
    kind = _local_transport(ctx, pkg)
    if kind == "stdio":
        if ctx.opts.headers:
            raise ctx.user_error("headers apply to HTTP transports; this package uses stdio")
        return kind, None, {}, (), ()
    transport = pkg["transport"]
    url = render_url(ctx, transport, {}, lookup)
    headers, secrets, optional = render_headers(ctx, transport, {}, lookup)
    return kind, url, headers, secrets, optional


def _local_transport(ctx: Ctx, pkg: Mapping[str, Any]) -> str:
    kind = transport_type(pkg)
    if kind not in TRANSPORTS:
        raise ctx.unsafe(f"package transport {kind!r} is not one of {', '.join(TRANSPORTS)}")
    return kind


def _render_mcpb(ctx: Ctx, server: Mapping[str, Any], pkg: Mapping[str, Any]) -> Launch:
    """No faithful launcher exists for a bundle: record what to fetch and how to verify it."""
    if ctx.opts.args:
        raise ctx.user_error("args need a launcher, and an mcpb bundle has none in mcpsync")
    identifier = check_url(ctx, field_text(ctx, pkg, "identifier") or "", "mcpb identifier")
    env, secrets, _, optional = render_env(ctx, pkg)
    return Launch(
        transport=_local_transport(ctx, pkg),
        registry_type="mcpb",
        identifier=identifier,
        package_version=_package_version(ctx, server, pkg),
        env=env,
        secrets=secrets,
        optional=optional,
        file_sha256=check_sha256(ctx, field_text(ctx, pkg, "fileSha256"), required=True),
    )


# ---------------------------------------------------------------------------------------------
# Remotes


def _render_remote(ctx: Ctx, remote: Mapping[str, Any]) -> Launch:
    kind = field_text(ctx, remote, "type") or ""
    if kind not in REMOTE_TRANSPORTS:
        raise ctx.unsafe(f"remote type {kind!r} is not one of {', '.join(REMOTE_TRANSPORTS)}")
    if ctx.opts.args or ctx.opts.env:
        raise ctx.user_error(
            "args and env apply to packages; a remote takes variables and headers",
        )
    declared = declared_variables(ctx, remote)
    headers, secrets, optional = render_headers(ctx, remote, declared, {})
    return Launch(
        transport=kind,
        registry_type="remote",
        url=render_url(ctx, remote, declared, {}),
        headers=headers,
        secrets=secrets,
        optional=optional,
    )
