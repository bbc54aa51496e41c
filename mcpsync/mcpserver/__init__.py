"""`mcpsync mcp serve`: mcpsync as an MCP server for AI assistants (the official `mcp` SDK,
the `[mcp]` extra). Its tools run the CLI's own commands, so it sits above the CLI; the CLI
imports it only when that command runs."""
