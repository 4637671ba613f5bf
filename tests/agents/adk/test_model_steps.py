"""What each model step was offered, as a `toolcrib.model.step` span linked to the
event the step produced (agents.adk.model_steps)."""

import pytest
from google.adk.models import LlmRequest
from google.genai import types

from agents.adk import model_steps
from agents.models import Event, RunSpan

pytestmark = pytest.mark.django_db(transaction=True)


def request_with(instruction: str) -> LlmRequest:
    return LlmRequest(
        model="offline/demo",
        config=types.GenerateContentConfig(system_instruction=instruction),
    )


def test_a_secret_state_value_in_the_instruction_is_redacted():
    request = request_with("Call the API with key sk-live-123 for ada.")

    text = model_steps.instruction_of(
        request, state={"user:api_key": "sk-live-123", "name": "ada"}
    )

    assert text == "Call the API with key [redacted] for ada."


def test_a_long_instruction_is_cut():
    text = model_steps.instruction_of(request_with("x" * 10_000), state={})

    assert len(text) == model_steps.INSTRUCTION_CHARS


def test_each_model_step_names_its_event_and_what_it_was_offered(
    alice, demo_agents, start_session, say
):
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "weather in london?")

    steps = RunSpan.objects.filter(run_id=run["id"], name=model_steps.MODEL_STEP_SPAN)
    by_event = {s.attributes[model_steps.EVENT_ID]: s.attributes for s in steps}
    answered = Event.objects.filter(
        session_id=session, kind__in=["function_call", "text"]
    ).values_list("event_id", flat=True)
    assert set(by_event) == set(answered)
    for offered in by_event.values():
        assert offered[model_steps.TOOLS] == ["analyze_sentiment", "get_weather_report"]
        assert offered[model_steps.INPUT_TOKENS] > 0
        assert offered[model_steps.AGENT] == "weather_sentiment_agent"
