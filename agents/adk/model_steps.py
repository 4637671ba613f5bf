"""What the model was offered at each step, as a span: ModelStepsPlugin.

Runs last of TOOLCRIB_PLUGINS' before-model callbacks, so governance has pruned the
request: the tools named are the ones the model was offered. In ADK 2.13 (telemetry
schema v2, its default) no model span is current while a before-model callback
runs: the current span is the agent's (`invoke_agent`), and ADK opens its
`generate_content` span only after the callbacks, where no plugin sees it. So each
step gets a span of its own, `toolcrib.model.step`, begun before the model call
(its instruction redacted and cut, its tools, its number of contents) and ended
with the model's answer: the id of the event it produced, and its tokens.

The event is found exactly, not by order: ADK hands the before-model callback a
context writing into the model response event's own `actions` (its
`_model_callback_context`), and `on_event_callback` gets that same event before it
is stored, the same `actions` object included.

Cost: nothing while no SDK tracer records (the current span does not record); one
dict of attributes and one span per model step while one does.
"""

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.adk.agents.context import Context
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.adk.models import LlmRequest, LlmResponse
from google.adk.plugins import BasePlugin
from google.genai import types
from opentelemetry import trace

from agents.redaction import SecretValues

tracer = trace.get_tracer("toolcrib")

MODEL_STEP_SPAN = "toolcrib.model.step"
INSTRUCTION = "toolcrib.model.instruction"
TOOLS = "toolcrib.model.tools"
CONTENTS = "toolcrib.model.contents"
EVENT_ID = "toolcrib.model.event_id"
MODEL = "toolcrib.model.name"
AGENT = "toolcrib.agent"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
INSTRUCTION_CHARS = 4000


@dataclass
class _Step:
    span: trace.Span
    actions: object  # the model response event's EventActions


class ModelStepsPlugin(BasePlugin):
    """One `toolcrib.model.step` span per model step, linked to its event."""

    def __init__(self, name: str = "toolcrib_model_steps") -> None:
        super().__init__(name)
        self._steps: dict[int, _Step] = {}  # by id() of the event's actions

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Begin the step's span with what the model is offered."""
        if not trace.get_current_span().is_recording():
            return None
        actions = callback_context.actions
        span = tracer.start_span(
            MODEL_STEP_SPAN,
            attributes=offered(
                llm_request,
                agent=callback_context.agent_name,
                state=callback_context.state.to_dict(),
            ),
            start_time=time.time_ns(),
        )
        self._steps[id(actions)] = _Step(span, actions)
        return None

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        """End the step's span with the event it produced and its tokens."""
        if event.partial or not self._steps:
            return None
        step = self._steps.get(id(event.actions))
        if step is None or step.actions is not event.actions:
            return None
        del self._steps[id(event.actions)]
        step.span.set_attributes(answered(event))
        step.span.end()
        return None

    async def after_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> None:
        """End any step no event came of (a model error)."""
        self._end_all()

    async def close(self) -> None:
        self._end_all()

    def _end_all(self) -> None:
        for step in self._steps.values():
            step.span.end()
        self._steps.clear()


def offered(
    request: LlmRequest, *, agent: str, state: Mapping[str, Any]
) -> dict[str, object]:
    """The attributes of what a model step offers the model."""
    return {
        AGENT: agent,
        MODEL: request.model or "",
        INSTRUCTION: instruction_of(request, state=state),
        TOOLS: sorted(request.tools_dict),
        CONTENTS: len(request.contents),
    }


def answered(event: Event) -> dict[str, object]:
    """The attributes of the model's answer: its event id and tokens."""
    attributes: dict[str, object] = {EVENT_ID: event.id}
    usage = event.usage_metadata
    if usage is not None:
        attributes[INPUT_TOKENS] = usage.prompt_token_count or 0
        attributes[OUTPUT_TOKENS] = usage.candidates_token_count or 0
    return attributes


def instruction_of(request: LlmRequest, *, state: Mapping[str, Any]) -> str:
    """The system instruction's text, cut to INSTRUCTION_CHARS, without the state's
    secret values (agents.redaction's one rule, at any depth of the state).

    ADK's templates render a state value into the text (`{user:preferences}`: a
    dict as repr() writes it), where no key says what is secret any more: so each
    value the rule hides in the state is masked wherever it appears in the text,
    as it is or escaped. Masked here, at the source, so no span processor (an
    operator's exporter included) ever sees it.
    """
    config = request.config
    text = _text(config.system_instruction if config is not None else None)
    text = SecretValues.of(state).mask(text)
    if len(text) > INSTRUCTION_CHARS:
        return text[: INSTRUCTION_CHARS - 1] + "…"
    return text


def _text(instruction: object) -> str:
    if instruction is None:
        return ""
    if isinstance(instruction, str):
        return instruction
    if isinstance(instruction, types.Content):
        return "\n".join(part.text or "" for part in instruction.parts or [])
    if isinstance(instruction, types.Part):
        return instruction.text or ""
    if isinstance(instruction, list):
        return "\n".join(_text(item) for item in instruction)
    return str(instruction)
