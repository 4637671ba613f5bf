"""The governed tool gateway: the catalog served over MCP (docs/gateway.md)."""
