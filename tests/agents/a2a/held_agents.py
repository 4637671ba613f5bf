"""A code agent whose turn runs as long as a test wants: its one tool waits for a
file the test makes (the gate), in this process or in a live server's.

`TOOLCRIB_TEST_GATE` names the gate's file; the tool makes `<gate>.entered` when it
starts waiting. It waits on the file system, never on the database.
"""

import asyncio
import os
from pathlib import Path

from google.adk.agents import LlmAgent

from agents.adk.offline import OfflineLlm, OfflineStep

GATE_ENV = "TOOLCRIB_TEST_GATE"
REPLY = "The gate opened."


def entered(gate: Path) -> Path:
    return gate.with_name(f"{gate.name}.entered")


async def wait_for_gate() -> dict:
    """Waits until the gate opens."""
    gate = Path(os.environ[GATE_ENV])
    entered(gate).touch()
    while not gate.exists():
        await asyncio.sleep(0.002)
    return {"opened": True}


gatekeeper = LlmAgent(
    name="gatekeeper",
    model=OfflineLlm(
        script=[OfflineStep.call("wait_for_gate"), OfflineStep.say(REPLY)]
    ),
    tools=[wait_for_gate],
)
