"""Registry package/remote + the user's inputs -> a fully rendered launch (command or url).

May import: suggest and errors only: manifest, lock, resolve and sync all stand on it.

`choose` picks what to launch from a server.json, `render` turns it into a `Launch`, and
`render_custom` does the same for a server declared by hand in mcp.toml. The rules:

- Launchers: npm -> `npx -y [runtime] id@version [args]`; pypi -> `uvx [runtime] id==version
  [args]`; oci -> `docker run -i --rm [runtime] [-e VAR ...] image:tag [args]`; nuget ->
  `dnx [runtime] id@version --yes [-- args]`. The package's own `version` is used; when it is
  missing the server's version stands in (publishers version both in lockstep). A package
  whose version says `latest` renders as `latest` unless given the version lock pinned it to
  (`render(package_version=…)`): the server's version may not exist in its store.
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

The package: `model` (LaunchOptions, Launch), `checks` (reading and validating untrusted
data), `values` (arguments, variables, env, urls, headers) and `rendering` (choose, render,
render_custom, the launchers).
"""

from __future__ import annotations

from mcpsync.launch.model import (
    LATEST,
    LAUNCHABLE,
    REMOTE_TRANSPORTS,
    TRANSPORTS,
    Launch,
    LaunchOptions,
)
from mcpsync.launch.rendering import (
    argument_notes,
    choose,
    render,
    render_custom,
    unused_inputs,
)

__all__ = [
    "LATEST",
    "argument_notes",
    "LAUNCHABLE",
    "REMOTE_TRANSPORTS",
    "TRANSPORTS",
    "Launch",
    "LaunchOptions",
    "choose",
    "render",
    "render_custom",
    "unused_inputs",
]
