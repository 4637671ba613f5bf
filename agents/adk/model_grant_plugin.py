"""ModelGrantPlugin: a model step on a model the user may not use is not taken.

Before every model call it asks agents.model_grants whether the turn's user may use
the step's model (as agents name it), so a grant revoked, expired or given while a
turn runs holds from its next model step, in every process. A refused step is
answered with an error instead of the model's answer: the turn ends with
MODEL_NOT_GRANTED and the grant (or the default) that refused it, in words the
user reads. The root model is also checked as the turn starts (turns/runner.py),
before anything is stored.
"""

from typing import Self

from google.adk.agents.context import Context
from google.adk.models import LlmRequest, LlmResponse
from google.adk.plugins import BasePlugin

from agents.model_grants import ModelNotGranted, aexplain
from agents.models import Run


class ModelGrantPlugin(BasePlugin):
    """Refuses a model step whose model the turn's user may not use."""

    def __init__(self, *, user_id: int) -> None:
        super().__init__(name="toolcrib_model_grants")
        self.user_id = user_id

    @classmethod
    def for_run(cls, *, run: Run) -> Self:
        """The plugin for one turn: its run's user."""
        return cls(user_id=run.user_id)

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Answer with the refusal instead of calling a model not granted."""
        model = llm_request.model or ""
        decision = await aexplain(user_id=self.user_id, model=model)
        if decision.allowed:
            return None
        return LlmResponse(
            error_code=ModelNotGranted.code, error_message=decision.refusal(model)
        )
