"""Scripted agents for toolset activation, on the inventory demo's two toolsets.

Factories, registered by tests/toolsets/test_activation.py through settings; each
model notes what every request declares in tests.toolsets.scripted.OFFERED.
"""

from google.adk.agents import LlmAgent

from agents.adk.offline import OfflineStep
from demo.inventory import InventoryAdmin, InventoryQuery
from tests.toolsets.scripted import RecordingLlm
from toolsets.activation import activation_tools


def _agent(name: str, script: list[OfflineStep], *, switches: bool = True) -> LlmAgent:
    tools = [InventoryQuery(), InventoryAdmin()]
    return LlmAgent(
        name=f"{name}_agent",
        description=f"Test agent {name}.",
        model=RecordingLlm(script=script),
        tools=[*tools, *activation_tools()] if switches else tools,
    )


def switcher() -> LlmAgent:
    """Lists, activates the admin toolset, then restocks in the same turn."""
    return _agent(
        "switcher",
        [
            OfflineStep.call("list_toolsets"),
            OfflineStep.call("activate_toolset", name="inventory_admin"),
            OfflineStep.call("restock_item", item="bolts", quantity=5),
            OfflineStep.say("done"),
        ],
    )


def retirer() -> LlmAgent:
    """Deactivates the query toolset, then calls one of its tools anyway."""
    return _agent(
        "retirer",
        [
            OfflineStep.call("deactivate_toolset", name="inventory_query"),
            OfflineStep.call("find_item", item="bolts"),
            OfflineStep.say("done"),
        ],
    )


def eager() -> LlmAgent:
    """Activates the admin toolset and restocks in one batch, then restocks again."""
    return _agent(
        "eager",
        [
            OfflineStep.calls(
                [
                    ("activate_toolset", {"name": "inventory_admin"}),
                    ("restock_item", {"item": "bolts", "quantity": 5}),
                ]
            ),
            OfflineStep.call("restock_item", item="bolts", quantity=7),
            OfflineStep.say("done"),
        ],
    )


def fumbler() -> LlmAgent:
    """Activates a toolset that does not exist, then one already active."""
    return _agent(
        "fumbler",
        [
            OfflineStep.call("activate_toolset", name="no_such_toolset"),
            OfflineStep.call("activate_toolset", name="inventory_query"),
            OfflineStep.call("deactivate_toolset", name="inventory_admin"),
            OfflineStep.say("done"),
        ],
    )


def restocker() -> LlmAgent:
    """No activation tools: restocks whatever it was offered."""
    return _agent(
        "restocker",
        [
            OfflineStep.call("restock_item", item="bolts", quantity=5),
            OfflineStep.say("done"),
        ],
        switches=False,
    )
