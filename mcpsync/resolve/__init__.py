"""mcp.toml + a registry -> pins: choose versions, render launches, keep pins that still
answer their inputs (resolver), a `latest` package's pin and the artifact record (pinning),
what lock warns about (lockwarning); snapshot what a manifest needs for air-gapped CI (mirror).
May import: project, lock, artifacts, manifest, launch, registry and everything below."""
