"""Loader: the loader-tool pattern of progressive exposure (docs/availability.md).

The model starts with one small tool, ``load_math_tools``; the math tools are hidden
until it calls it, and only for the rest of that turn. With the offline model, type
``load the math tools`` and then, in the same turn, the model may call them.
"""

from google.adk.agents import LlmAgent
from google.adk.tools import ToolContext

from toolsets.availability import add_tools, hidden


@hidden
def factorial(n: int) -> dict:
    """Compute the factorial of n.

    Args:
        n: A non-negative integer.
    """
    if n < 0:
        return {"status": "error", "error_message": "n must be non-negative."}
    result = 1
    for value in range(2, n + 1):
        result *= value
    return {"status": "success", "result": result}


@hidden
def fibonacci(n: int) -> dict:
    """Compute the n-th Fibonacci number.

    Args:
        n: A non-negative integer.
    """
    if n < 0:
        return {"status": "error", "error_message": "n must be non-negative."}
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return {"status": "success", "result": a}


def load_math_tools(tool_context: ToolContext) -> dict:
    """Load the math tools (factorial, fibonacci) for the rest of this turn."""
    offered = add_tools(tool_context, [factorial, fibonacci])
    return {"status": "success", "tools": offered}


def loader() -> LlmAgent:
    """An agent that pulls in its math tools only when it needs them."""
    return LlmAgent(
        name="loader_agent",
        description="Loads math tools on demand.",
        instruction="Call load_math_tools before computing factorials or Fibonacci.",
        model="offline/demo",
        tools=[load_math_tools, factorial, fibonacci],
    )


# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "loader": [
        "Load the math tools",
        "Load the math tools, then factorial of 5",
    ],
}
