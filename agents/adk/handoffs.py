"""HandoffPlugin: an escalation names, on the event itself, where control goes.

A transfer names its target in the event (`actions.transfer_to_agent`); an
escalation (`actions.escalate`) hands control to the escalating agent's parent,
which only the agent tree knows. This plugin writes that parent's name into the
event's custom_metadata before the event is stored, so the stored event, a replay
and the live stream all say the same thing. It never replaces the event.
"""

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event as AdkEvent
from google.adk.plugins import BasePlugin

from agents.events.wire import ESCALATED_TO

PLUGIN_NAME = "toolcrib_handoffs"


class HandoffPlugin(BasePlugin):
    """Stamps an escalation with the agent it hands control to."""

    def __init__(self, name: str = PLUGIN_NAME) -> None:
        super().__init__(name)

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: AdkEvent
    ) -> AdkEvent | None:
        """Add the escalation target in place; returning None keeps other plugins."""
        if event.partial or not event.actions.escalate:
            return None
        parent = escalation_target(invocation_context, event.author)
        if parent:
            event.custom_metadata = {
                **(event.custom_metadata or {}),
                ESCALATED_TO: parent,
            }
        return None


def escalation_target(invocation_context: InvocationContext, author: str) -> str | None:
    """The name of the parent of the agent `author`, if it has one."""
    root = invocation_context.agent.root_agent
    agent = root.find_agent(author)
    parent = agent.parent_agent if agent is not None else None
    return parent.name if parent is not None else None
