"""Wire money only after a person approves: ADK's tool confirmation, made durable.

``wire_money`` is a ``FunctionTool(..., require_confirmation=True)``. The first call
does not run: ADK answers it with an error and asks with an
``adk_request_confirmation`` call (an ``approval_request`` event). Toolcrib keeps
that request as a Request of kind approval (agents.requests); the session owner lists it
(``GET /api/approvals/?status=pending``) and decides
(``POST /api/approvals/{id}/decide/`` ``{"approved": true}``, or a ``decide`` frame on
the session socket). Approved: the tool runs and the agent goes on in the same
invocation. Rejected (or expired): ADK's rejection reaches the agent.
"""

from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool


def wire_money(recipient: str, amount: float) -> dict:
    """Wires money from the user's account to a recipient.

    Args:
        recipient: Who receives the money.
        amount: How much to send, in dollars.
    """
    return {"status": "ok", "message": f"Sent {amount} dollars to {recipient}."}


def balance() -> dict:
    """Returns the balance of the user's account."""
    return {"status": "ok", "balance": 1000}


bank = LlmAgent(
    name="bank",
    description="Wires money once you approve each transfer.",
    instruction=(
        "You help the user with their bank account. Use 'balance' to read it and "
        "'wire_money' to send money; every transfer waits for the user's approval. "
        "If it is rejected, say so and do not try again."
    ),
    tools=[balance, FunctionTool(wire_money, require_confirmation=True)],
)

# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "bank": [
        "What is my balance?",
        'Wire money: 50 to "Bob"',
    ],
}
