#!/usr/bin/env bash
# End to end: `mcpsync probe` and `verify --surface` against a real MCP server package from the
# npm registry, its version pinned: @modelcontextprotocol/server-memory (stdio, started by
# `npx -y <id>@<version>` exactly as mcp.lock renders it).
#
# The package is installed with npm into the project's own node_modules under a cache dir
# (.cache/probe-real, gitignored), where npx finds it; HOME points there too, so npx's own
# cache stays out of the user's. The registry is a `file:` snapshot written here (the real MCP
# registry is not needed). Asserts the surface hash and tool count this version pins, that a
# second probe changes nothing, and that `verify --surface` passes.
#
#   bash tests/probe_real.sh            PYTHON=/path/to/python bash tests/probe_real.sh
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGE="@modelcontextprotocol/server-memory"
VERSION="2026.8.31"
NAME="io.github.modelcontextprotocol/server-memory"
TOOLS=9
HASH="sha256-0Vio9v90oagRgEjsnrbj6SNgXoEK817xINSo2Bs0A7E="
PYTHON="${PYTHON:-python3}"
export NPM_CONFIG_LOGLEVEL=error NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false

cache="$PWD/.cache/probe-real"
project="$cache/project"
rm -rf "$project"
mkdir -p "$project/registry" "$cache/home"
export HOME="$cache/home"

npm install --prefix "$project" --no-save --no-audit --silent "$PACKAGE@$VERSION"

cat >"$project/registry/servers.json" <<JSON
{"servers": [{"server": {
  "name": "$NAME", "description": "Knowledge graph memory", "version": "$VERSION",
  "packages": [{"registryType": "npm", "identifier": "$PACKAGE", "version": "$VERSION",
                "transport": {"type": "stdio"}}]},
  "_meta": {"io.modelcontextprotocol.registry/official": {
    "status": "active", "publishedAt": "2026-08-31T00:00:00Z", "isLatest": true}}}]}
JSON
cat >"$project/mcp.toml" <<TOML
[registry]
url = "file:registry"

[servers.memory]
name = "$NAME"
version = "$VERSION"
env = { MEMORY_FILE_PATH = "$project/memory.jsonl" }
TOML

mcpsync() { "$PYTHON" -m mcpsync -C "$project" "$@"; }

mcpsync lock
mcpsync probe --probe-timeout 120
grep -qx "hash = \"$HASH\"" "$project/mcp.lock" || {
  echo "probe_real: expected surface hash $HASH in mcp.lock" >&2
  sed -n '/\[server.surface\]/,/^$/p' "$project/mcp.lock" >&2
  exit 1
}
grep -qx "tool-count = $TOOLS" "$project/mcp.lock" || {
  echo "probe_real: expected $TOOLS tools" >&2
  exit 1
}
before="$(cat "$project/mcp.lock")"
mcpsync probe --probe-timeout 120 2>&1 | grep -q "mcp.lock unchanged."
[ "$before" = "$(cat "$project/mcp.lock")" ]
mcpsync verify --surface --probe-timeout 120
echo "probe_real: $PACKAGE@$VERSION: $TOOLS tools, $HASH"
