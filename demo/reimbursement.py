"""Reimbursement with a manager's approval: ADK's long-running function tool example.

``ask_for_approval`` is a ``LongRunningFunctionTool``: it files the request and
answers ``{"status": "pending", ...}`` at once; the call stays pending (a Request
of kind call, agents.requests) until a manager posts the decision, and then the agent
resumes in the same invocation. Managers are staff or members of the ``managers``
group, and never the employee who asked. With the offline model:

1. As alice: ``ask for approval of 500 for "a conference trip"``: the stream shows
   the call with ``long_running_tool_ids`` and its pending response.
2. As a manager: ``GET /api/calls/`` lists it; ``POST
   /api/sessions/{id}/function-responses/`` with ``{"call_id": ..., "response":
   {"status": "approved", "approver": "..."}}`` resumes alice's agent.
3. ``reimburse 50 for "a taxi"``: small amounts are paid at once with ``reimburse``.
"""

from google.adk.agents import LlmAgent
from google.adk.tools import LongRunningFunctionTool, ToolContext

from agents.pauses import answered_by

MANAGERS = "managers"
APPROVAL_LIMIT = 100


def ask_for_approval(purpose: str, amount: float, tool_context: ToolContext) -> dict:
    """Asks a manager to approve paying back an expense of 100 dollars or more.

    Args:
        purpose: What the money was spent on.
        amount: The amount to pay back, in dollars.
    """
    return {
        "status": "pending",
        "approver": "a manager",
        "purpose": purpose,
        "amount": amount,
        "ticket_id": f"reimbursement-{(tool_context.function_call_id or '')[-8:]}",
    }


def reimburse(purpose: str, amount: float) -> dict:
    """Pays an expense back to the employee.

    Args:
        purpose: What the money was spent on.
        amount: The amount to pay back, in dollars.
    """
    return {"status": "ok", "message": f"Paid back {amount} dollars for {purpose}."}


reimbursement = LlmAgent(
    name="reimbursement_agent",
    description="Pays back your expenses; a manager approves the big ones.",
    instruction=(
        "You handle the reimbursement process for the employees. "
        f"If the amount is less than {APPROVAL_LIMIT} dollars, use 'reimburse' to "
        "pay it back at once. "
        f"For {APPROVAL_LIMIT} dollars or more, use 'ask_for_approval' and wait for "
        "the manager's decision. If the manager approves, use 'reimburse'; if the "
        "manager rejects, tell the employee."
    ),
    tools=[
        reimburse,
        answered_by(LongRunningFunctionTool(ask_for_approval), group=MANAGERS),
    ],
)

# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "reimbursement": [
        'Reimburse 50 for "a taxi"',
        'Ask for approval of 500 for "a conference trip"',
    ],
}
