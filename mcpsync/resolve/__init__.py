"""mcp.toml + a registry -> pins: choose versions, render launches, keep pins that still
answer their inputs (resolver); snapshot what a manifest needs for air-gapped CI (mirror).
May import: project, lock, artifacts, manifest, launch, registry and everything below."""
