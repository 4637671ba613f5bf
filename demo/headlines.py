"""Headlines shown as the tool returns them: the seed's ``skip_summarization`` action.

The tool's result is already what the user should read, so it sets
``tool_context.actions.skip_summarization``: ADK then ends the turn with the
function response, without another model call to put it into words. With the
offline model, type ``headlines about science``.
"""

from google.adk.agents import LlmAgent
from google.adk.tools import ToolContext

HEADLINES = {
    "science": ["Comet seen from three continents", "New battery lasts a decade"],
    "sports": ["Underdogs win the cup", "Marathon record falls by a minute"],
}


def get_headlines(topic: str, tool_context: ToolContext) -> dict:
    """Today's headlines on a topic, ready to show as they are.

    Args:
        topic: The news topic, e.g. "science" or "sports".
    """
    tool_context.actions.skip_summarization = True
    found = HEADLINES.get(topic.strip().lower())
    if not found:
        return {"status": "error", "message": f"No headlines about {topic} today."}
    lines = "; ".join(found)
    return {"status": "success", "message": f"Headlines about {topic}: {lines}."}


headlines = LlmAgent(
    name="headlines_agent",
    description="Shows today's headlines on a topic, exactly as the news desk wrote them.",
    instruction="When the user asks for news or headlines, use 'get_headlines'.",
    tools=[get_headlines],
)

# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "headlines": [
        "Headlines about science",
        "Headlines about sports",
    ],
}
