"""A code agent that meets secrets the way real ones do, for the redaction tests.

Scripted (no user text carries a secret, so every outlet can be searched for one):
its first model step calls `keep_preferences`, which writes `user:preferences`
with a database password nested in it; its instruction templates
`{user:preferences?}`, so ADK renders that dict into the next steps' instruction;
its second step calls `sign_in` with a `password` argument; `sign_in` answers
with a `session_token`; the agent's own after_tool_callback then rewrites that
answer, so what the model received differs from what the tool returned.

Register with settings.TOOLCRIB_AGENTS (or TOOLCRIB_EXTRA_AGENTS for a server):
"tests.agents.secret_agents.vault_keeper".
"""

import logging
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools import BaseTool, ToolContext

from agents.adk.offline import OfflineCall, OfflineLlm, OfflineStep

AGENT = "vault_keeper"
# Planted in state, nested two levels down.
DB_PASSWORD = "pg-Vault-7731-hunter2"
# The `password` argument the model calls sign_in with.
SIGN_IN_PASSWORD = "s1gn-In-Pw-90210"
# What sign_in answers with, under a secret-named key.
SESSION_TOKEN = "tok-5e55-10n-abcdef"
SECRETS = (DB_PASSWORD, SIGN_IN_PASSWORD, SESSION_TOKEN)
REWRITTEN_NOTE = "checked by the vault keeper"

logger = logging.getLogger(__name__)


def keep_preferences(theme: str, tool_context: ToolContext) -> dict:
    """Keeps the user's preferences, the database settings with them.

    Args:
        theme: The colour theme.
    """
    tool_context.state["user:preferences"] = {
        "theme": theme,
        "database": {"host": "db.internal", "db_password": DB_PASSWORD},
    }
    return {"status": "kept", "theme": theme}


def sign_in(username: str, password: str) -> dict:
    """Signs the user in to the records system.

    Args:
        username: Who signs in.
        password: Their password.
    """
    # A tool that logs what it was given, as tools do.
    logger.info("sign_in called with %s", {"username": username, "password": password})
    logger.info("sign_in checks the password %s", password)
    return {"status": "signed in", "user": username, "session_token": SESSION_TOKEN}


def rewrite_sign_in(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
) -> dict | None:
    """The agent's own after_tool_callback: the model reads a checked answer."""
    if tool.name != "sign_in":
        return None
    return {"status": "signed in", "note": REWRITTEN_NOTE}


def vault_keeper() -> LlmAgent:
    """Keeps preferences, then signs in; scripted, whatever the user says."""
    return LlmAgent(
        name=AGENT,
        model=OfflineLlm(
            script=[
                OfflineStep(
                    function_calls=[
                        OfflineCall(name="keep_preferences", args={"theme": "dark"})
                    ]
                ),
                OfflineStep(
                    function_calls=[
                        OfflineCall(
                            name="sign_in",
                            args={"username": "ada", "password": SIGN_IN_PASSWORD},
                        )
                    ]
                ),
                OfflineStep(text="Signed in, with your preferences kept."),
            ]
        ),
        description="Keeps your preferences and signs you in.",
        instruction=(
            "You keep the user's preferences and sign them in. "
            "Current preferences: {user:preferences?}"
        ),
        tools=[keep_preferences, sign_in],
        after_tool_callback=rewrite_sign_in,
    )
