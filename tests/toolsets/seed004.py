"""The agents of the tool-availability reference (seed 004), written from its examples.

Agent Framework's `ctx.add_tools(...)`, `middleware=[...]` and
`options={"tool_choice": ...}` are, in Toolcrib, `add_tools(ctx, ...)`,
`before_tool_callback=[agent_middleware(...)]` and a message's `tool_choice`. The
model is scripted (tests.toolsets.exposed.SeeingLlm notes what each step offers).
Factories, registered by the tests through settings.TOOLCRIB_AGENTS.
"""

from collections.abc import Awaitable, Callable
from typing import Annotated

from google.adk.agents import LlmAgent
from google.adk.tools import ToolContext
from pydantic import Field

from agents.adk.offline import OfflineStep
from tests.toolsets.exposed import SeeingLlm
from toolsets.availability import FunctionInvocation, add_tools, agent_middleware

# The loader pattern.


def factorial(n: Annotated[int, Field(description="A non-negative integer.")]) -> str:
    """Compute the factorial of n."""
    if n < 0:
        return "Error: n must be a non-negative integer."
    result = 1
    for value in range(2, n + 1):
        result *= value
    return f"{n}! = {result}"


def fibonacci(
    n: Annotated[
        int, Field(description="The 0-based index in the Fibonacci sequence.")
    ],
) -> str:
    """Compute the n-th Fibonacci number."""
    if n < 0:
        return "Error: n must be a non-negative integer."
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return f"fib({n}) = {a}"


# The ctx parameter is injected by the framework and is NOT visible to the model.
def load_math_tools(ctx: ToolContext) -> str:
    """Load additional math tools (factorial, fibonacci) so they can be used."""
    add_tools(ctx, [factorial, fibonacci])
    return "Loaded math tools: factorial, fibonacci. You can now call them."


def impostor_factorial(n: int) -> str:
    """Not the factorial that was loaded."""
    return "?"


impostor_factorial.__name__ = "factorial"


def load_with_clash(ctx: ToolContext) -> str:
    """Load factorial, then fibonacci with a different factorial: a clash."""
    add_tools(ctx, [factorial])
    try:
        add_tools(ctx, [fibonacci, impostor_factorial])
    except ValueError as error:
        return f"Error: {error}"
    return "Loaded."


def math_agent() -> LlmAgent:
    """The seed's MathAgent: it starts with only the loader."""
    script = [
        OfflineStep.call("load_math_tools"),
        OfflineStep.call("factorial", n=5),
        OfflineStep.say("5! = 120"),
    ]
    return LlmAgent(
        name="MathAgent",
        model=SeeingLlm(script=script),
        instruction=(
            "You are a math assistant. If you need math capabilities that are not "
            "yet available, call load_math_tools first."
        ),
        tools=[load_math_tools],  # agent starts with only the loader
    )


def hasty_math_agent() -> LlmAgent:
    """Calls factorial in the same batch as the loader: not offered yet."""
    script = [
        OfflineStep.calls([("load_math_tools", {}), ("factorial", {"n": 5})]),
        OfflineStep.say("done"),
    ]
    return LlmAgent(
        name="HastyMathAgent", model=SeeingLlm(script=script), tools=[load_math_tools]
    )


def clashing_math_agent() -> LlmAgent:
    """Loads with a clash: the clashing batch adds nothing."""
    script = [
        OfflineStep.call("load_with_clash"),
        OfflineStep.call("factorial", n=3),
        OfflineStep.say("done"),
    ]
    return LlmAgent(
        name="ClashingMathAgent",
        model=SeeingLlm(script=script),
        tools=[load_with_clash],
    )


# The gating pattern.

_last_fetched_id: str | None = None
UPDATED: list[tuple[str, str]] = []


def get_record(record_id: str, ctx: ToolContext) -> str:
    """Fetch a record. Unlocks update_record for the same record."""
    global _last_fetched_id
    _last_fetched_id = record_id
    add_tools(ctx, update_record)  # gate: expose the write tool now
    return f"Record {record_id}: title='Example record', status='open'"


def update_record(record_id: str, status: str) -> str:
    """Update the status of a record."""
    UPDATED.append((record_id, status))
    return f"Updated record {record_id} to status '{status}'."


def record_agent() -> LlmAgent:
    """The seed's RecordAgent: update_record is hidden until get_record runs."""
    script = [
        OfflineStep.call("get_record", record_id="REC-42"),
        OfflineStep.call("update_record", record_id="REC-42", status="in-progress"),
        OfflineStep.say("Updated."),
    ]
    return LlmAgent(
        name="RecordAgent",
        model=SeeingLlm(script=script),
        instruction="You help manage records. Fetch a record before updating it.",
        tools=[get_record],  # update_record is hidden until get_record runs
    )


# Middleware.


async def enforce_read_before_write(
    context: FunctionInvocation,
    call_next: Callable[[], Awaitable[None]],
) -> None:
    """Reject update_record calls that target a different record than the one fetched."""
    if context.function.name == "update_record":
        requested_id = (
            context.arguments.get("record_id")
            if hasattr(context.arguments, "get")
            else None
        )
        if requested_id != _last_fetched_id:
            # Set result without calling call_next — the function never executes.
            context.result = (
                f"Error: you must fetch record '{requested_id}' before updating it. "
                f"Last fetched record was '{_last_fetched_id}'."
            )
            return
    await call_next()


def guarded_record_agent() -> LlmAgent:
    """The seed's RecordAgent with middleware: it updates a record it never fetched."""
    script = [
        OfflineStep.call("get_record", record_id="REC-42"),
        OfflineStep.call("update_record", record_id="REC-7", status="in-progress"),
        OfflineStep.call("update_record", record_id="REC-42", status="in-progress"),
        OfflineStep.say("Updated."),
    ]
    return LlmAgent(
        name="GuardedRecordAgent",
        model=SeeingLlm(script=script),
        instruction="Fetch a record before updating it.",
        tools=[get_record, update_record],
        before_tool_callback=[agent_middleware(enforce_read_before_write)],
    )
