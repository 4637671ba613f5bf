"""A bench agent that records and publishes events at a fixed rate (bench.stream_latency).

`fanout` has one tool, `emit`, which stores `count` events in its session at `rate`
a second through the real persist-and-publish path (agents.events.log
`arecord_and_publish`: the session's next seq, the commit, then the doorbell),
inside the server, on the turn's own loop. Its turn: the user's message
"<rate> <count>", one `emit` call, and "done". Each event's `ts` is taken just
before it is stored, so a subscriber's receipt time minus `ts` is persist -> socket.
"""

import asyncio
import time

from google.adk.agents import LlmAgent
from google.adk.tools import ToolContext

from agents.adk.offline import OfflineLlm, OfflineStep
from agents.events.log import arecord_and_publish
from agents.models import Session

# A state_delta event of about the size of a tool call's frame.
PAYLOAD = "x" * 200


async def emit(tool_context: ToolContext) -> dict:
    """Record and publish events at the rate the user's message asks for.

    Returns:
        How many events it stored and over how many seconds.
    """
    rate, count = (
        int(word) for word in tool_context.user_content.parts[0].text.split()
    )
    adk = tool_context.session
    session = await Session.objects.aget(
        app_name=adk.app_name, user_id=adk.user_id, adk_id=adk.id
    )
    started = time.monotonic()
    for step in range(count):
        delay = started + step / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        await arecord_and_publish(
            session=session,
            kind="state_delta",
            data={"text": PAYLOAD, "state_delta": {"session": {"tick": step}}},
        )
    return {"events": count, "seconds": round(time.monotonic() - started, 3)}


fanout = LlmAgent(
    name="fanout",
    description="Records events at a fixed rate.",
    instruction="Call emit.",
    model=OfflineLlm(
        model="offline/bench",
        script=[OfflineStep.call("emit"), OfflineStep.say("done")],
    ),
    tools=[emit],
)
