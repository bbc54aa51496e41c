"""mcp.lock -> config files: plan every target's intended bytes, check, diff or write them all
or nothing (plan), who wrote which entry (ownership), one module per target kind (targets),
and git's merge driver for the project's files (mergedriver). May import the lower layers
(tree, lock, manifest, launch, edit, fsutil); never resolve, trust or cli."""
