"""A calculator built from a toolset: the seed's ``SimpleMathToolset`` example.

Reproduces the ADK tools docs example of a ``BaseToolset`` next to a plain tool. ADK
2.13's ``FunctionTool`` takes no ``name=``, so the toolset names its tools through
``tool_name_prefix``: the model sees ``calculator_add_numbers`` and
``calculator_subtract_numbers``. With the offline model, type:

- ``add 2 and 3``: ``calculator_add_numbers(a=2, b=3)`` returns 5 and sets the session
  state ``last_math_operation`` to ``"addition"``.
- ``subtract 10 and 4``: ``calculator_subtract_numbers(a=10, b=4)`` returns 6.
- ``greet me`` / ``greet name=Ada``: ``greet_user()`` / ``greet_user(name="Ada")``.
"""

from google.adk.agents import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools import BaseTool, FunctionTool, ToolContext
from google.adk.tools.base_toolset import BaseToolset


def add_numbers(a: int, b: int, tool_context: ToolContext) -> dict:
    """Adds two integer numbers.

    Args:
        a: The first number.
        b: The second number.

    Returns:
        A dictionary with the sum, e.g., {'status': 'success', 'result': 5}
    """
    tool_context.state["last_math_operation"] = "addition"
    return {"status": "success", "result": a + b}


def subtract_numbers(a: int, b: int) -> dict:
    """Subtracts the second number from the first.

    Args:
        a: The first number.
        b: The second number.

    Returns:
        A dictionary with the difference, e.g., {'status': 'success', 'result': 1}
    """
    return {"status": "success", "result": a - b}


class SimpleMathToolset(BaseToolset):
    """Addition and subtraction, named ``<prefix>add_numbers`` and so on."""

    def __init__(self, prefix: str = "math_") -> None:
        # get_tools_with_prefix joins prefix and name with "_" itself.
        super().__init__(tool_name_prefix=prefix.rstrip("_") or None)
        self._tools = [FunctionTool(add_numbers), FunctionTool(subtract_numbers)]

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        """Both tools, minus any that tool_filter leaves out."""
        return [t for t in self._tools if self._is_tool_selected(t, readonly_context)]


def greet_user(name: str = "User") -> dict:
    """Greets the user.

    Args:
        name: The name to greet the user by.
    """
    return {"greeting": f"Hello, {name}!"}


calculator = LlmAgent(
    name="CalculatorAgent",
    description="Adds and subtracts numbers, and greets you.",
    instruction=(
        "You are a helpful calculator and greeter. "
        "Use 'greet_user' for greetings. "
        "Use 'calculator_add_numbers' to add and 'calculator_subtract_numbers' to "
        "subtract. "
        "Announce the state of 'last_math_operation' if it's set."
    ),
    tools=[FunctionTool(greet_user), SimpleMathToolset(prefix="calculator_")],
)

# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "calculator": [
        "Add 2 and 3",
        "Subtract 10 and 4",
        "Greet me",
    ],
}
