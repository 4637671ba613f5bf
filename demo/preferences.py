"""User preferences in ``user:`` state: the seed's ``update_user_preference`` example.

Reproduces the ADK tools docs example that writes ``tool_context.state["user:..."]``,
which every session of the same user then sees. With the offline model, type:

- ``set preference "theme" to "dark"``: the two quoted strings fill ``preference`` and
  ``value`` in that order, so ``user:preferences`` becomes ``{"theme": "dark"}``.
- ``set preference=language value=fr`` works too (``name=value`` pairs).
"""

from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool, ToolContext

USER_PREFERENCES_KEY = "user:preferences"


def update_user_preference(
    preference: str, value: str, tool_context: ToolContext
) -> dict:
    """Updates a user-specific preference.

    Args:
        preference: The name of the preference, e.g. "theme".
        value: The new value of the preference, e.g. "dark".
    """
    # Copy before changing: the state holds the same dict object as the session.
    preferences = dict(tool_context.state.get(USER_PREFERENCES_KEY) or {})
    preferences[preference] = value
    tool_context.state[USER_PREFERENCES_KEY] = preferences
    return {"status": "success", "updated_preference": preference}


preferences = LlmAgent(
    name="preferences_agent",
    description="Remembers your preferences across all your sessions.",
    instruction=(
        "You remember the user's preferences. When the user wants to set or change "
        "a preference, use the 'update_user_preference' tool. "
        "Current preferences: {user:preferences?}"
    ),
    tools=[FunctionTool(update_user_preference)],
)

# Conversation starters an empty session offers (agents.adk.builder.code_agent_starters):
# each works on the offline model (tests/demo/test_starters.py).
STARTERS = {
    "preferences": [
        'Set preference "theme" to "dark"',
        "Set preference=language value=fr",
    ],
}
