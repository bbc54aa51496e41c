"""mcp.lock -> config files: plan every target's intended bytes, check, diff or write them all
or nothing (plan), who wrote which entry (ownership), one module per target kind (targets).
May import resolve-free layers: lock, manifest, launch, edit, fsutil; never trust or cli."""
