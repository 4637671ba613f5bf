"""ADK's native OpenAI model (bare ``gpt-...`` names), with its key from settings.

A module of its own: it imports the openai SDK, which only the litellm extra
installs. agents.adk.providers registers it lazily.
"""

from typing import Any

from google.adk.integrations.openai import OpenAILlm

from agents.adk.providers import ConfiguredModel, openai_client_kwargs


class ToolcribOpenAILlm(OpenAILlm, ConfiguredModel):
    """OpenAILlm whose key and base URL come from settings."""

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        if self.client is None and self.api_key is None:
            configured = openai_client_kwargs()
            self.api_key = configured["api_key"]
            self.base_url = self.base_url or configured["base_url"]
