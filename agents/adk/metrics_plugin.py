"""ModelCallMetricsPlugin: each model call's time, for toolcrib_model_call_duration_seconds.

After the plugins that may answer a model call themselves in TOOLCRIB_PLUGINS: a
call an earlier plugin answers (a spent budget) never reaches the model, so its
before_model_callback never starts a clock here. A call
ends with its last, non-partial response (after_model_callback also sees every
partial of a streamed answer) or with its error. One instance per turn
(agents/plugins.py), so the clocks it keeps are that turn's alone.
"""

import time

from google.adk.agents.context import Context
from google.adk.models import LlmRequest, LlmResponse
from google.adk.plugins import BasePlugin

from project import metrics

UNKNOWN_MODEL = "unknown"


class ModelCallMetricsPlugin(BasePlugin):
    """Times every model call of a turn, by model name."""

    def __init__(self) -> None:
        super().__init__(name="toolcrib_model_call_metrics")
        # Per (invocation, agent): the model and when its call started.
        self.started: dict[tuple[str, str], tuple[str, float]] = {}

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Start the call's clock."""
        key = (callback_context.invocation_id, callback_context.agent_name)
        model = llm_request.model or UNKNOWN_MODEL
        self.started[key] = (model, time.perf_counter())
        return None

    async def after_model_callback(
        self, *, callback_context: Context, llm_response: LlmResponse
    ) -> LlmResponse | None:
        """Stop the clock at the call's last response."""
        if not llm_response.partial:
            self._observe(callback_context)
        return None

    async def on_model_error_callback(
        self, *, callback_context: Context, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        """A failed call took its time too."""
        self._observe(callback_context)
        return None

    def _observe(self, context: Context) -> None:
        started = self.started.pop((context.invocation_id, context.agent_name), None)
        if started is None:
            return
        model, at = started
        metrics.observe_model_call(model=model, seconds=time.perf_counter() - at)
