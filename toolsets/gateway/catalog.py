"""The tools a caller may use now, as an MCP client sees them.

A tool is listed when the catalog has it (enabled, not missing, in an enabled
toolset), the caller's credential reaches its toolset, and access allows it to the
user now (toolsets.access: grants, conditions aside, which each call checks). The
same list resolves a call's name, so a tool that is not listed cannot be called.

Names: a tool's MCP name is its catalog name `<toolset>.<tool>`. MCP allows
[A-Za-z0-9_.-] and 128 characters at most: any other character is spelled `_`,
and a name that would then clash with another, or is too long, is not served.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolsets import access, reviews
from toolsets.gateway.auth import Caller
from toolsets.models import Tool

MAX_NAME = 128
UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
# ADK's declarations dump genai's Schema (`OBJECT`, `any_of`): the JSON schema
# spelling of its keys.
SCHEMA_KEYS = {
    "any_of": "anyOf",
    "max_items": "maxItems",
    "min_items": "minItems",
    "max_length": "maxLength",
    "min_length": "minLength",
    "max_properties": "maxProperties",
    "min_properties": "minProperties",
}
DROPPED_KEYS = {"property_ordering", "nullable"}


@dataclass(frozen=True)
class GatewayTool:
    """One tool as served: its MCP name, catalog name, description and schema."""

    name: str
    full_name: str
    toolset: str
    description: str
    input_schema: dict[str, Any]


def mcp_name(full_name: str) -> str:
    """The MCP-safe spelling of a catalog name."""
    return UNSAFE.sub("_", full_name)


async def alist_tools(*, caller: Caller) -> list[GatewayTool]:
    """Every tool the caller may use now, by name."""
    rows = [
        row
        async for row in Tool.objects.filter(
            enabled=True,
            missing=False,
            toolset__enabled=True,
            toolset__missing=False,
        )
        .select_related("toolset__stored_import")
        .order_by("full_name")
        if caller.may_reach(row.toolset.name) and not reviews.is_held(row)
    ]
    decisions = await access.aexplain_many(
        user_id=caller.user.pk, tools=[row.full_name for row in rows]
    )
    served: dict[str, GatewayTool] = {}
    for row in rows:
        name = mcp_name(row.full_name)
        if not decisions[row.full_name].allowed or name in served:
            continue
        if len(name) > MAX_NAME:
            continue
        served[name] = GatewayTool(
            name=name,
            full_name=row.full_name,
            toolset=row.toolset.name,
            description=row.description,
            input_schema=input_schema(row.parameters),
        )
    return list(served.values())


async def afind_tool(*, caller: Caller, name: str) -> GatewayTool | None:
    """The listed tool of that MCP name, or None."""
    for tool in await alist_tools(caller=caller):
        if tool.name == name:
            return tool
    return None


def input_schema(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's stored parameters as an MCP inputSchema (a JSON schema object)."""
    schema = _json_schema(dict(parameters or {}))
    schema["type"] = "object"
    schema.setdefault("properties", {})
    return schema


def _json_schema(value: Any) -> Any:
    if isinstance(value, list):
        return [_json_schema(item) for item in value]
    if not isinstance(value, dict):
        return value
    converted: dict[str, Any] = {}
    for key, item in value.items():
        if key in DROPPED_KEYS:
            continue
        if key == "type" and isinstance(item, str):
            converted[key] = item.lower()
            continue
        if key == "properties" and isinstance(item, dict):
            converted[key] = {name: _json_schema(s) for name, s in item.items()}
            continue
        converted[SCHEMA_KEYS.get(key, key)] = _json_schema(item)
    return converted
