"""A code agent with a slow async tool, for stopping a turn mid-call.

The offline model calls `wait_for_the_kettle` when a message mentions the kettle,
and echoes any other message at once. Register it with settings.TOOLCRIB_AGENTS.
"""

import asyncio
import threading

from google.adk.agents import LlmAgent

KETTLE_SECONDS = 60
# Set when a call starts: the tool is in flight (the turn runs on another thread).
STARTED = threading.Event()


async def wait_for_the_kettle() -> dict:
    """Waits for the kettle to boil, which takes a long while."""
    STARTED.set()
    await asyncio.sleep(KETTLE_SECONDS)
    return {"status": "success", "report": "The kettle has boiled."}


def kettle() -> LlmAgent:
    """Waits for the kettle when asked; answers anything else at once."""
    return LlmAgent(
        name="kettle",
        description="Boils the kettle, slowly.",
        instruction="If the user asks about the kettle, use wait_for_the_kettle.",
        tools=[wait_for_the_kettle],
    )
