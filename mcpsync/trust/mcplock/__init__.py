"""mcp-lock/1 (ToolPin's draft): export mcp.lock as it (export) and read one as the
draft's Reader and Enforcer (check)."""
