"""SecretValuesPlugin: the secret values a turn meets, noted as it meets them.

Text that leaves a turn (a span attribute, a log line, the audit's summary of a
result) no longer says which of its words were a secret field: ADK renders state
into the instruction (`{user:preferences}`), and a tool may echo its `password`
argument in its answer. So each secret value (agents.redaction's rule, at any
depth) is noted when the turn first holds it, and masked in every such text
(agents.redaction.SecretValues): the state each model step renders its
instruction from, the arguments of each call the model makes, each tool's
result. Credentials are noted as they are unsealed (agents.adk.credentials).

First of TOOLCRIB_PLUGINS, so no other plugin's answer skips it; it never
answers. Cost: one walk of the state per model step and of each call's
arguments and result; a regex is compiled only when a new secret is met.
"""

from typing import Any

from google.adk.agents.context import Context
from google.adk.models import LlmRequest, LlmResponse
from google.adk.plugins import BasePlugin
from google.adk.tools import BaseTool

from agents.redaction import note_secret_values


class SecretValuesPlugin(BasePlugin):
    """Notes the turn's secret values: state, call arguments, results."""

    def __init__(self, name: str = "toolcrib_secret_values") -> None:
        super().__init__(name)

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Note the state the step's instruction was rendered from."""
        note_secret_values(callback_context.state.to_dict())
        return None

    async def after_model_callback(
        self, *, callback_context: Context, llm_response: LlmResponse
    ) -> LlmResponse | None:
        """Note the arguments of the calls the model made."""
        content = llm_response.content
        for part in (content.parts or []) if content is not None else []:
            if part.function_call is not None:
                note_secret_values(part.function_call.args or {})
        return None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict | None:
        """Note a call's arguments (one no model step made: an approved call)."""
        note_secret_values(tool_args)
        return None

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: Any,
    ) -> dict | None:
        """Note the secret fields of a tool's result."""
        note_secret_values(result)
        return None
