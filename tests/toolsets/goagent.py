"""Scripted agents that call the GoAgent reference's tools (tests/toolsets/gotools.py).

A tool that fails raises, and the model reads the error as the call's ToolResult.
Factories, registered by the tests through settings.TOOLCRIB_AGENTS.
"""

from google.adk.agents import LlmAgent
from google.adk.models import LlmRequest

from agents.adk.offline import OfflineLlm, OfflineStep
from tests.toolsets.gotools import add, my_tool, search

# The function responses each model call was given, newest last.
HEARD: list[list[dict]] = []


class HearingLlm(OfflineLlm):
    """An OfflineLlm that notes the tool results each request carries."""

    def answer(self, llm_request: LlmRequest):
        HEARD.append(
            [
                {"name": part.function_response.name, **part.function_response.response}
                for content in llm_request.contents
                for part in content.parts or []
                if part.function_response
            ]
        )
        return super().answer(llm_request)


def _agent(name: str, script: list[OfflineStep], **kwargs) -> LlmAgent:
    return LlmAgent(
        name=f"{name}_agent",
        description=f"Test agent {name}, from the GoAgent tool API.",
        model=HearingLlm(script=script),
        tools=[my_tool, add, search],
        **kwargs,
    )


def go_agent() -> LlmAgent:
    """Calls my_tool with nothing to process, reads the error, then adds."""
    script = [
        OfflineStep.call("my_tool", input=" "),
        OfflineStep.call("add", a=2, b=3),
        OfflineStep.say("done"),
    ]
    return _agent("go", script)


def strict() -> LlmAgent:
    """The same calls, by an agent that fails its turn when a tool raises."""
    script = [
        OfflineStep.call("my_tool", input=" "),
        OfflineStep.call("add", a=2, b=3),
        OfflineStep.say("done"),
    ]
    return _agent("strict", script)


def explain_errors(tool, args, tool_context, error) -> dict:
    """The agent's own on_tool_error_callback: its words, not Toolcrib's."""
    return {"error": f"please rephrase ({error})", "handled_by": "agent"}


def careful() -> LlmAgent:
    """Calls my_tool with nothing to process; its own callback answers the error."""
    script = [OfflineStep.call("my_tool", input=""), OfflineStep.say("done")]
    return _agent("careful", script, on_tool_error_callback=explain_errors)
