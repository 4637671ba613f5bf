"""Toolcrib's agents served over A2A: agent cards and JSON-RPC (docs/a2a.md)."""
