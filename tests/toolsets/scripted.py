"""Code agents whose model is a scripted OfflineLlm that records what it was offered.

Each is a factory (ADK agents have one parent, and the builder calls factories), so
a test registers it with `settings.TOOLCRIB_AGENTS`.
"""

from google.adk.agents import LlmAgent
from google.adk.models import LlmRequest
from google.adk.tools import FunctionTool

from agents.adk.offline import OfflineLlm, OfflineStep, declared_tools
from tests.toolsets.gauges import GaugeToolset
from tests.toolsets.tools import (
    launch_rocket,
    read_gauge,
    revoke_launch_access,
    stall_forever,
)

OFFERED: list[list[str]] = []


class RecordingLlm(OfflineLlm):
    """An OfflineLlm that notes the tool names each request declares."""

    def answer(self, llm_request: LlmRequest):
        OFFERED.append(sorted(spec.name for spec in declared_tools(llm_request)))
        return super().answer(llm_request)


def rocketeer() -> LlmAgent:
    """Calls launch_rocket whatever it was offered, then answers."""
    script = [OfflineStep.call("launch_rocket", target="moon"), OfflineStep.say("done")]
    return LlmAgent(
        name="rocketeer_agent",
        description="Launches rockets.",
        model=RecordingLlm(script=script),
        tools=[launch_rocket, read_gauge, GaugeToolset(prefix="dash")],
    )


def revoker() -> LlmAgent:
    """Launches, revokes its own launch grant, then tries to launch again."""
    script = [
        OfflineStep.call("launch_rocket", target="moon"),
        OfflineStep.call("revoke_launch_access"),
        OfflineStep.call("launch_rocket", target="mars"),
        OfflineStep.say("done"),
    ]
    return LlmAgent(
        name="revoker_agent",
        description="Revokes its own access mid-turn.",
        model=RecordingLlm(script=script),
        tools=[launch_rocket, revoke_launch_access],
    )


def juggler() -> LlmAgent:
    """Calls three tools at once: one allowed, one denied, one that does not exist."""
    script = [
        OfflineStep.calls(
            [
                ("launch_rocket", {"target": "moon"}),
                ("read_gauge", {"name": "oxygen"}),
                ("self_destruct", {}),
            ]
        ),
        OfflineStep.say("done"),
    ]
    return LlmAgent(
        name="juggler_agent",
        description="Calls tools in parallel.",
        model=RecordingLlm(script=script),
        tools=[launch_rocket, read_gauge],
    )


def staller() -> LlmAgent:
    """Calls a tool that never answers."""
    return LlmAgent(
        name="staller_agent",
        description="Waits forever.",
        model=RecordingLlm(script=[OfflineStep.call("stall_forever")]),
        tools=[stall_forever],
    )


def refuse_launches(tool, args, tool_context) -> dict | None:
    """The agent's own before_tool_callback: no launch runs, the model is told why."""
    if tool.name != "launch_rocket":
        return None
    return {"status": "error", "error_message": "Launches are paused by the agent."}


def guarded() -> LlmAgent:
    """Calls launch_rocket, which its own before_tool_callback refuses."""
    script = [OfflineStep.call("launch_rocket", target="moon"), OfflineStep.say("done")]
    return LlmAgent(
        name="guarded_agent",
        description="Refuses its own launches.",
        model=RecordingLlm(script=script),
        tools=[launch_rocket],
        before_tool_callback=refuse_launches,
    )


def confirmer() -> LlmAgent:
    """Calls launch_rocket, whose code asks a person to confirm each call."""
    script = [OfflineStep.call("launch_rocket", target="moon"), OfflineStep.say("done")]
    return LlmAgent(
        name="confirmer_agent",
        description="Launches only once a person confirms.",
        model=RecordingLlm(script=script),
        tools=[FunctionTool(launch_rocket, require_confirmation=True)],
    )
