"""A code agent on the scripted server's model whose tool denies that model to
alice, as staff would while her turn runs. Register it with settings.TOOLCRIB_AGENTS.
"""

from django.contrib.auth import get_user_model
from google.adk.agents import LlmAgent

from agents.model_grants import grant_model

MODEL = "lab/fake-gpt"


def take_the_model_away() -> dict:
    """Takes the model away from alice (what staff do on the Models page)."""
    alice = get_user_model().objects.get(username="alice")
    grant, _ = grant_model(model=MODEL, effect="deny", user=alice)
    return {"status": "success", "grant": grant.pk}


def revoked_mid_turn() -> LlmAgent:
    """Calls take_the_model_away, then would answer on the same model."""
    return LlmAgent(
        name="revoked_mid_turn",
        description="Loses its model between two model steps.",
        model=MODEL,
        tools=[take_the_model_away],
    )
