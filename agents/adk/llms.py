"""ADK's Gemini and LiteLlm, with keys and base URLs passed from settings explicitly.

agents.adk.providers registers these for the names ADK's own classes serve, so an
agent's model string (or TOOLCRIB_DEFAULT_MODEL) resolves to them. Importing this
module does not import litellm: ADK's wrapper imports it on the first call.
"""

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models import LlmRequest, LlmResponse, lite_llm
from google.adk.models.google_llm import Gemini
from google.adk.models.lite_llm import LiteLlm

from agents.adk.providers import (
    ConfiguredModel,
    acall_kwargs,
    acheck_connection,
    gemini_client_kwargs,
    litellm_kwargs,
)


class ToolcribLiteLlm(LiteLlm, ConfiguredModel):
    """LiteLlm whose key, base URL, timeout and retries come from settings."""

    def __init__(self, model: str, **kwargs: Any) -> None:
        super().__init__(model, **{**litellm_kwargs(model), **kwargs})

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """LiteLlm's call, with the arguments read from settings now.

        One instance serves every turn of a process, so settings (and a stored
        connection's row, agents.model_table) are read per call, not once; every
        call of an instance writes the same values but after a change.
        """
        self._additional_args.update(await acall_kwargs(self.model))
        try:
            async for response in super().generate_content_async(llm_request, stream):
                yield response
        except Exception as exc:
            # The name the agent gave: a connection's failure names the connection.
            exc.toolcrib_model = self.model  # type: ignore[attr-defined]
            raise

    async def awarm_up(self) -> None:
        """Import litellm (3-7 s, once per process) in a thread, not on the loop;
        then refuse a `<connection>/<model>` no connection serves."""
        await asyncio.to_thread(lite_llm._ensure_litellm_imported)
        import litellm  # imported by now: its providers' names, without a cost

        await acheck_connection(self.model, litellm_providers=litellm.provider_list)


class ToolcribGemini(Gemini, ConfiguredModel):
    """Gemini whose API key (or Vertex AI project) comes from settings."""

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        if self.client_kwargs is None and self.client is None:
            self.client_kwargs = gemini_client_kwargs()
