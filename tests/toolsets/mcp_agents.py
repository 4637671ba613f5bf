"""A scripted agent that calls the tools of an MCP import (tests/toolsets/builtin/
mcp_server.py), whose toolset the test puts in tests.toolsets.builtin.imported.calc.

A factory, registered by the test through settings.TOOLCRIB_AGENTS.
"""

from google.adk.agents import LlmAgent

from agents.adk.offline import OfflineStep
from tests.toolsets.builtin import imported
from tests.toolsets.goagent import HearingLlm


def mcp_caller() -> LlmAgent:
    """Calls the server's refusing tool, then its echo, then answers."""
    script = [
        OfflineStep.call("calc_mcp_refuse", text="boom"),
        OfflineStep.call("calc_mcp_echo", text="hi"),
        OfflineStep.say("done"),
    ]
    return LlmAgent(
        name="mcp_caller_agent",
        description="Calls an MCP server's tools.",
        model=HearingLlm(script=script),
        tools=[imported.calc],
    )
