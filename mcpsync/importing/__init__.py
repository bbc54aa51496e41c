"""`mcpsync import`, the side door in: read each client's file (read), find the registry
server an entry runs (match), and plan the mcp.toml additions (plan). May import sync (target
formats), manifest, registry and below."""
