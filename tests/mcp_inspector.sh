#!/usr/bin/env bash
# An independent MCP client drives `mcpsync mcp serve` over stdio: the MCP Inspector's CLI.
#
# On a throwaway project (one custom server, one HoloDeck agent: no registry, no network for
# mcpsync) it lists the tools with --strict (a schema portability error fails), then calls
# mcpsync_help, mcpsync_write (lock, sync) and mcpsync_read (list, sync check) and checks each
# result. The Inspector itself exits non-zero on a failed call or an isError result.
#
# Needs node/npx (npm registry reachable on first run) and mcpsync with the mcp extra on PATH.
#   bash tests/mcp_inspector.sh            MCPSYNC=/path/to/mcpsync bash tests/mcp_inspector.sh
set -euo pipefail

INSPECTOR="@modelcontextprotocol/inspector@2.12.0"
MCPSYNC="${MCPSYNC:-mcpsync}"
PYTHON="${PYTHON:-python3}"
export NPM_CONFIG_LOGLEVEL=error NPM_CONFIG_UPDATE_NOTIFIER=false

project="$(mktemp -d)"
trap 'rm -rf "$project"' EXIT
mkdir -p "$project/agents/helper"
cat >"$project/agents/helper/agent.yaml" <<'YAML'
name: helper
description: Checks the MCP setup
model: {provider: openai, name: gpt-4o-mini}
instructions:
  inline: Be brief.
YAML
cat >"$project/mcp.toml" <<'TOML'
[servers.notes]                    # a custom server: locking it needs no registry
command = "uvx"
args = ["acme-notes-mcp==1.4.2"]

[[targets]]
kind = "holodeck-agent"
path = "agents/*/agent.yaml"
TOML

# inspect ARGS...: one Inspector CLI run against a fresh `mcpsync mcp serve` in the project.
inspect() {
  npx -y "$INSPECTOR" --cli --cwd "$project" "$@" -- "$MCPSYNC" mcp serve
}

# expect PYTHON-EXPRESSION: checks the JSON result on stdin (bound to `r`).
expect() {
  "$PYTHON" -c 'import json, sys
r = json.load(sys.stdin)
if not eval(sys.argv[1]):
    sys.exit("mcp_inspector: unexpected result for " + sys.argv[1] + ":\n" + json.dumps(r, indent=2))
' "$1"
}

step() { echo "mcp_inspector: $*" >&2; }

step "tools/list --strict"
inspect --method tools/list --strict 2>"$project/strict.log" |
  expect '[t["name"] for t in r["tools"]] == ["mcpsync_read", "mcpsync_write", "mcpsync_help"]'
if grep -q '^Warning: tool' "$project/strict.log"; then
  cat "$project/strict.log" >&2
  echo "mcp_inspector: tool schemas have portability warnings" >&2
  exit 1
fi

step "tools/call mcpsync_help {command: lock}"
inspect --method tools/call --tool-name mcpsync_help --tool-arg command=lock |
  expect 'r["structuredContent"]["data"]["commands"][0]["path"] == "lock"'

step "tools/call mcpsync_write {command: lock}"
inspect --method tools/call --tool-name mcpsync_write --tool-arg command=lock |
  expect 'r["structuredContent"]["data"]["written"] is True'

step "tools/call mcpsync_write {command: sync}"
inspect --method tools/call --tool-name mcpsync_write --tool-arg command=sync |
  expect 'r["structuredContent"]["return_value"] == 0'
grep -q 'acme-notes-mcp==1.4.2' "$project/agents/helper/agent.yaml"

step "tools/call mcpsync_read {command: sync, flags: {check: true}}"
inspect --method tools/call --tool-name mcpsync_read --tool-arg command=sync \
  'flags={"check": true}' |
  expect 'r["structuredContent"]["return_value"] == 0'

step "tools/call mcpsync_read {command: list, fields: [servers]}"
inspect --method tools/call --tool-name mcpsync_read --tool-arg command=list \
  'fields=["servers"]' |
  expect '[s["alias"] for s in r["structuredContent"]["data"]["servers"]] == ["notes"]'

step "ok"
