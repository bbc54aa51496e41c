"""mcp.toml, the file people write: parse and validate it (parse), edit it keeping comments
(edit), HoloDeck per-tool settings (holodeck), and the values its enumerated keys accept
(choices, import-free for the CLI). May import: suggest, versions and the floor (errors)."""
