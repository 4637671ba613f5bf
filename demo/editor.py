"""An editing loop that a reviewer ends by escalating: the seed's ``escalate`` action.

A ``LoopAgent`` runs ``writer`` then ``reviewer`` until the reviewer's tool sets
``tool_context.actions.escalate`` (the seed: "in a LoopAgent, a sub-agent's tool
setting escalate=True ends the loop"), at most five rounds. Each draft is saved as
a new version of the artifact ``draft.txt``. The escalation event says who ended
the loop, to whom control went back (``editor_loop``) and why. With the offline
model, type e.g. ``write a short text about the sea``: three rounds, then the
reviewer approves. (``LoopAgent`` is deprecated in ADK 2.13 in favour of
``Workflow``, which cannot yet be a sub-agent; it still works.)
"""

from google.adk.agents import LlmAgent, LoopAgent
from google.adk.tools import ToolContext
from google.genai import types

ROUNDS = 3
DRAFT = "draft.txt"


async def write_draft(topic: str, tool_context: ToolContext) -> dict:
    """Writes the next draft of a text about a topic, and saves it as draft.txt.

    Args:
        topic: What the text is about.
    """
    round_ = int(tool_context.state.get("temp:round", 0)) + 1
    tool_context.state["temp:round"] = round_
    text = f"Draft {round_} about {topic}: " + " ".join(["more"] * round_)
    version = await tool_context.save_artifact(DRAFT, types.Part.from_text(text=text))
    return {"status": "success", "round": round_, "version": version}


def review_draft(tool_context: ToolContext) -> dict:
    """Reviews the latest draft; approves it, ending the loop, once it is good enough."""
    round_ = int(tool_context.state.get("temp:round", 0))
    if round_ < ROUNDS:
        return {"verdict": "needs another round", "round": round_}
    tool_context.actions.escalate = True
    tool_context.actions.transfer_reason = (
        f"The draft is good enough after {round_} rounds."
    )
    tool_context.actions.skip_summarization = True
    return {"verdict": "approved", "round": round_}


writer = LlmAgent(
    name="writer",
    description="Writes the next draft.",
    instruction=(
        "You write texts. Whatever the user asks you to write (a text, a poem, a "
        "story, a draft), use 'write_draft' with its topic."
    ),
    tools=[write_draft],
)

reviewer = LlmAgent(
    name="reviewer",
    description="Reviews the latest draft.",
    instruction=(
        "You review what the writer wrote. Whatever the user asked to write (a "
        "text, a poem, a story, a draft), use 'review_draft' to review the draft."
    ),
    tools=[review_draft],
)

editor_loop = LoopAgent(
    name="editor_loop",
    description="Writes and reviews a text until the reviewer approves it.",
    sub_agents=[writer, reviewer],
    max_iterations=5,
)

# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "editor_loop": [
        "Write a short text about the sea",
        "Write a draft about autumn",
    ],
}
