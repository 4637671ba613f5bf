"""The tool catalog and its governance: toolsets, tools, grants and the audit of calls.

One module per concept; every model is importable from here, as before.
"""

from toolsets.models.audit import LATENCY_BUCKETS, ToolCall, ToolCallTotal
from toolsets.models.catalog import Tool, ToolImport, Toolset
from toolsets.models.credentials import GatewayToken, ProviderIdentity
from toolsets.models.grants import AccessVersion, Grant, SessionToolset
from toolsets.models.people import Invite

__all__ = [
    "LATENCY_BUCKETS",
    "AccessVersion",
    "GatewayToken",
    "Grant",
    "Invite",
    "ProviderIdentity",
    "SessionToolset",
    "Tool",
    "ToolCall",
    "ToolCallTotal",
    "ToolImport",
    "Toolset",
]
