"""An agent used as a tool, whose own events reach the stream and the database.

ADK's ``AgentTool`` runs its agent in a throwaway in-memory session: none of the
child's events would reach Toolcrib (ADK_NOTES.md §3.12). A sub-agent with
``mode="single_turn"`` is what ADK 2.13 recommends instead: the parent calls it as
a tool named after it (one ``request`` argument), and the child's calls, results
and answer are events of the same session, with ``branch="summarizer@<call id>"``.
With the offline model, type ``summarize "Toolcrib runs agents and their tools
on Django with live streams and many users"``.
"""

from google.adk.agents import LlmAgent
from google.adk.agents.context import Context
from google.adk.models import LlmRequest, LlmResponse
from google.genai import types

MAX_WORDS = 8


def shorten(text: str) -> dict:
    """Shortens a text to its first words.

    Args:
        text: The text to shorten.
    """
    words = text.split()
    short = " ".join(words[:MAX_WORDS]) + (" ..." if len(words) > MAX_WORDS else "")
    return {"status": "success", "message": f"In short: {short}"}


def shorten_first(
    callback_context: Context, llm_request: LlmRequest
) -> LlmResponse | None:
    """Make the summarizer's first step a call to 'shorten': that is its whole job.

    Once 'shorten' has answered, the model is free again (to put it into words).
    """
    last = llm_request.contents[-1] if llm_request.contents else None
    if last and any(part.function_response for part in last.parts or []):
        return None
    llm_request.config.tool_config = types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(
            mode=types.FunctionCallingConfigMode.ANY,
            allowed_function_names=["shorten"],
        )
    )
    return None


summarizer = LlmAgent(
    name="summarizer",
    description="Summarizes a text it is given.",
    instruction="To summarize the text you were given, use 'shorten'.",
    mode="single_turn",
    tools=[shorten],
    before_model_callback=shorten_first,
)

briefing = LlmAgent(
    name="briefing_agent",
    description="Briefs you on a text, asking its summarizer agent for a summary.",
    instruction=(
        "You brief the user. When the user wants a text summarized, call the "
        "'summarizer' agent with the text as the request."
    ),
    sub_agents=[summarizer],
)

# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "briefing": [
        'Summarize "Agents call tools; Toolcrib decides who may call which, and when"',
        'Summarize "Toolcrib runs agents and their tools on Django with live streams and many users"',
    ],
}
