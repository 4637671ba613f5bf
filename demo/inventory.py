"""Inventory: toolset activation, the example of the ToolSet seed (docs/availability.md).

Two toolsets, as the seed's context returns them: `inventory_query` (tools for
querying, active by default) and `inventory_admin` (administrative tools, inactive
by default). The model manages them itself with list_toolsets, activate_toolset and
deactivate_toolset; only active toolsets' tools are offered. With the offline
model: `list toolsets`, `activate toolset name=inventory_admin`, then
`restock item="bolts" quantity=5`, and `deactivate toolset name=inventory_admin`.
"""

import threading

from google.adk.agents import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools import BaseTool, FunctionTool
from google.adk.tools.base_toolset import BaseToolset

from toolsets.activation import activation_tools

STOCK: dict[str, int] = {"bolts": 120, "nuts": 80, "washers": 0}
# One inventory a process, and ADK runs sync tools on threads of its own: a restock
# reads and writes an item's count under this lock, so none is lost.
_stock_lock = threading.Lock()


def find_item(item: str) -> dict:
    """Look up how many of an item are in stock.

    Args:
        item: The item's name, e.g. "bolts".
    """
    if item not in STOCK:
        return {"status": "error", "error_message": f"No item named {item}."}
    return {"status": "success", "item": item, "in_stock": STOCK[item]}


def count_items() -> dict:
    """Count the kinds of items and the units in stock."""
    return {"status": "success", "kinds": len(STOCK), "units": sum(STOCK.values())}


def restock_item(item: str, quantity: int) -> dict:
    """Add units of an item to the stock.

    Args:
        item: The item's name.
        quantity: How many units arrive.
    """
    if quantity <= 0:
        return {"status": "error", "error_message": "quantity must be positive."}
    with _stock_lock:
        in_stock = STOCK[item] = STOCK.get(item, 0) + quantity
    return {"status": "success", "item": item, "in_stock": in_stock}


def remove_item(item: str) -> dict:
    """Remove an item from the inventory.

    Args:
        item: The item's name.
    """
    with _stock_lock:
        removed = STOCK.pop(item, None)
    if removed is None:
        return {"status": "error", "error_message": f"No item named {item}."}
    return {"status": "success", "removed": item}


class InventoryQuery(BaseToolset):
    """Tools for querying the inventory: look up an item, count the stock."""

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        return [FunctionTool(find_item), FunctionTool(count_items)]


class InventoryAdmin(BaseToolset):
    """Administrative tools for the inventory: restock and remove items."""

    # The seed's AdminTools: not active until the model or the user activates it.
    catalog_defaults = {"active_by_default": False}

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        return [FunctionTool(restock_item), FunctionTool(remove_item)]


def inventory() -> LlmAgent:
    """An inventory clerk whose admin tools stay put away until it activates them."""
    return LlmAgent(
        name="inventory_agent",
        description="Answers stock questions; restocks after activating its admin "
        "tools.",
        instruction=(
            "Use list_toolsets to see your toolsets. To restock or remove items, "
            "activate the inventory_admin toolset with activate_toolset first, and "
            "deactivate it with deactivate_toolset when done."
        ),
        model="offline/demo",
        tools=[InventoryQuery(), InventoryAdmin(), *activation_tools()],
    )


# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "inventory": [
        "List toolsets",
        "Activate toolset name=inventory_admin",
        'Find item "bolts"',
    ],
}
