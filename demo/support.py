"""Customer support with a hand-over: the seed's "customer_support_agent" example.

Reproduces the ADK tools docs example where a tool sets
``tool_context.actions.transfer_to_agent`` to hand the conversation to a sub-agent.
With the offline model, type:

- ``this is urgent, i cant login``: ``main_agent`` calls ``check_and_transfer`` with the
  whole text, the tool transfers to ``support_agent``, and ``support_agent`` answers
  (and keeps answering the next turns).
- ``I need the support handler``: no urgency, but the words match ``support_agent``'s
  name and description, so ``main_agent`` calls ADK's ``transfer_to_agent`` itself.
- anything without urgency, e.g. ``how do I export a chart?``: ``main_agent`` answers
  itself, no tool and no transfer.
"""

from google.adk.agents import LlmAgent
from google.adk.tools import ToolContext


def check_and_transfer(query: str, tool_context: ToolContext) -> str:
    """Checks if the query requires escalation and transfers to another agent if needed.

    Args:
        query: The customer's message, as they wrote it.
    """
    if "urgent" in query.lower():
        tool_context.actions.transfer_to_agent = "support_agent"
        return "Transferring to the support agent..."
    return f"Processed query: '{query}'. No further action needed."


support_agent = LlmAgent(
    name="support_agent",
    description="Dedicated support handler for urgent customer issues.",
    instruction=(
        "You are the dedicated support agent. Mentioned you are a support handler "
        "and please help the user with their urgent issue."
    ),
)

customer_support = LlmAgent(
    name="main_agent",
    description="First point of contact for customer support of an analytics tool.",
    instruction=(
        "You are the first point of contact for customer support of an analytics "
        "tool. Answer general queries. If the user indicates urgency, use the "
        "'check_and_transfer' tool."
    ),
    tools=[check_and_transfer],
    sub_agents=[support_agent],
)

# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "customer_support": [
        "This is urgent, I can't login",
        "I need the support handler",
    ],
}
