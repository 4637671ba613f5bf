"""Call tools the way a turn does: a real ADK Runner driven by a scripted OfflineLlm."""

from collections.abc import Sequence
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.artifacts import BaseArtifactService, InMemoryArtifactService
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from agents.adk.offline import OfflineLlm, OfflineStep

APP_NAME = "builtin_tests"


async def call_tools(
    tools: Sequence[Any],
    calls: Sequence[tuple[str, dict[str, Any]]],
    *,
    user_id: str = "alice",
    artifacts: BaseArtifactService | None = None,
) -> list[dict[str, Any]]:
    """Run one turn whose model calls each tool in order; their responses."""
    script = [OfflineStep.call(name, **args) for name, args in calls]
    agent = LlmAgent(
        name="builtin_tester",
        model=OfflineLlm(script=[*script, OfflineStep.say("done")]),
        tools=list(tools),
    )
    runner = Runner(
        app=App(name=APP_NAME, root_agent=agent),
        session_service=InMemorySessionService(),
        artifact_service=artifacts,
        auto_create_session=True,
    )
    message = types.Content(role="user", parts=[types.Part(text="go")])
    responses: list[dict[str, Any]] = []
    async for event in runner.run_async(
        user_id=user_id, session_id="s1", new_message=message
    ):
        responses += [r.response for r in event.get_function_responses()]
    return responses


async def call_tool(
    tools: Sequence[Any],
    name: str,
    *,
    user_id: str = "alice",
    artifacts: BaseArtifactService | None = None,
    **args: Any,
) -> dict[str, Any]:
    """The response of one tool call made in a real turn."""
    [response] = await call_tools(
        tools, [(name, args)], user_id=user_id, artifacts=artifacts
    )
    return response


def memory_artifacts() -> InMemoryArtifactService:
    return InMemoryArtifactService()
