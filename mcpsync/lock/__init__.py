"""mcp.lock, what an entry must be: read and write it deterministically (lockfile), render
each entry again offline to tell a hand edit (integrity), read a merge-conflicted lock (merge),
the pinned tool surface with its hash (surface), and what a locked dependency tree record is
(tree). May import: artifacts (the record types),
manifest, launch and below; never resolve, sync or trust."""
