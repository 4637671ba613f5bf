"""A code agent with built-in toolsets, scripted to call the calculator and the shell.

A factory (ADK agents have one parent), registered by a test in TOOLCRIB_AGENTS.
"""

from google.adk.agents import LlmAgent

from agents.adk.offline import OfflineLlm, OfflineStep
from toolsets.builtin import calculator, http, shell


def toolbox() -> LlmAgent:
    script = [
        OfflineStep.call("calculate", expression="6 * 7"),
        OfflineStep.call("run_command", command="echo", args=["hi"]),
        OfflineStep.say("done"),
    ]
    return LlmAgent(
        name="toolbox_agent",
        description="Calculates, then runs a command.",
        model=OfflineLlm(script=script),
        tools=[calculator.toolset, shell.toolset],
    )


def api_caller() -> LlmAgent:
    """Calls the administrator's API through the http tool, trying a header of its own."""
    script = [
        OfflineStep.call("http_get", url="/items", headers={"Authorization": "forged"}),
        OfflineStep.say("done"),
    ]
    return LlmAgent(
        name="api_caller_agent",
        description="Reads the items of the administrator's API.",
        model=OfflineLlm(script=script),
        tools=[http.toolset],
    )
