"""The agent bench.vs_adk runs on ADK's own `adk api_server` and on Toolcrib."""

from . import agent  # noqa: F401 - ADK's loader finds `agent.root_agent` here
