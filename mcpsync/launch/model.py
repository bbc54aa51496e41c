"""What a launch is: mcp.toml's options for one server, and the rendered result."""

from __future__ import annotations

from collections.abc import Mapping

from msgspec import Struct, field

# A package version that names no version (server.json packages that say "latest"); lock pins
# the store's current version in its place (resolve.py), or refuses.
LATEST = "latest"


class LaunchOptions(Struct, frozen=True):
    """What mcp.toml says about how to launch one server."""

    alias: str
    package: str | None = None  # npm | pypi | oci | nuget | mcpb | remote
    transport: str | None = None  # stdio | streamable-http | sse
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    variables: Mapping[str, str] = field(default_factory=dict)


class Launch(Struct, frozen=True):
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
    # references the registry marks optional: a client must start the server with them unset
    optional: tuple[str, ...] = ()
    file_sha256: str | None = None  # mcpb bundles


LAUNCHABLE = ("npm", "pypi", "oci", "nuget")
TRANSPORTS = ("stdio", "streamable-http", "sse")
REMOTE_TRANSPORTS = ("streamable-http", "sse")
