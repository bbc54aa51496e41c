"""mcpserver."""
