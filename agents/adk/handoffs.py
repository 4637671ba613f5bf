"""HandoffPlugin: an escalation hands control to the parent, and says so on its event.

A transfer names its target in the event (`actions.transfer_to_agent`); an
escalation (`actions.escalate`) hands control to the escalating agent's parent,
which only the agent tree knows. This plugin writes that parent's name into the
event's custom_metadata before the event is stored, so the stored event, a replay
and the live stream all say the same thing. It never replaces the event.

Inside a loop (or any workflow agent) an escalation ends the loop, as ADK does. An
LlmAgent that escalates to an LlmAgent parent, which ADK would let go on answering
itself (and ask again next turn), is transferred to that parent instead, in the
same turn: the parent answers, and, being the last to answer, is the agent the
next turn starts with.
"""

from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.context import Context
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event as AdkEvent
from google.adk.plugins import BasePlugin
from google.adk.tools import BaseTool

from agents.adk.event_kinds import ESCALATED_TO

CHAT_MODES = (None, "chat")

PLUGIN_NAME = "toolcrib_handoffs"


class HandoffPlugin(BasePlugin):
    """Stamps an escalation with the agent it hands control to."""

    def __init__(self, name: str = PLUGIN_NAME) -> None:
        super().__init__(name)

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: Any,
    ) -> dict | None:
        """Turn an escalation outside a loop into a transfer to the parent."""
        actions = tool_context.actions
        if not actions.escalate or actions.transfer_to_agent:
            return None
        parent = answering_parent(tool_context.get_invocation_context().agent)
        if parent is not None:
            actions.transfer_to_agent = parent.name
        return None

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
    if invocation_context.agent is None:  # a workflow's tool node: no agent
        return None
    root = invocation_context.agent.root_agent
    agent = root.find_agent(author)
    parent = agent.parent_agent if agent is not None else None
    return parent.name if parent is not None else None


def answering_parent(agent: BaseAgent) -> LlmAgent | None:
    """The parent an escalating agent hands the conversation to: an LlmAgent parent
    of a chat-mode LlmAgent that may transfer to it; None inside a workflow agent
    (a loop ends instead) or for an agent run as a tool."""
    parent = agent.parent_agent
    if not isinstance(agent, LlmAgent) or not isinstance(parent, LlmAgent):
        return None
    if agent.mode not in CHAT_MODES or agent.disallow_transfer_to_parent:
        return None
    return parent
