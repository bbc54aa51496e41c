"""Read-only checks of what mcp.lock pins, against the world: start servers and read their
tools (probe), re-ask the registry and stores (verify), can this machine run it (doctor), and
the vendor-neutral mcp-lock/1 export and its Reader/Enforcer (mcplock). May import sync (the
export renders targets), resolve, lock and below; never importing, mcpserver or cli."""
