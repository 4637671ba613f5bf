"""What the API says about a model name: its provider, and whether it is the offline demo."""

from typing import Any

from django.conf import settings

OFFLINE_PREFIX = "offline/"


def effective_model(model: str) -> str:
    """The model a spec runs on: its own, or TOOLCRIB_DEFAULT_MODEL."""
    return model or settings.TOOLCRIB_DEFAULT_MODEL


def model_info(model: str) -> dict[str, Any]:
    """Name, provider and a label nobody mistakes for an LLM when it is the offline model."""
    name = effective_model(model)
    if name.startswith(OFFLINE_PREFIX):
        return {
            "name": name,
            "provider": "offline",
            "offline": True,
            "label": "Offline demo model (deterministic, no LLM, no network)",
        }
    provider = name.split("/", 1)[0] if "/" in name else _native_provider(name)
    return {"name": name, "provider": provider, "offline": False, "label": name}


def _native_provider(name: str) -> str:
    if name.startswith(("gemini-", "gemma-")):
        return "google"
    if name.startswith("claude-"):
        return "anthropic"
    if name.startswith(("gpt-", "o1", "o3", "o4")):
        return "openai"
    return "unknown"
