"""Eval sets and cases built with the models directly; the scripted model."""

import pytest
from google.adk.agents import LlmAgent

from agents.adk.offline import OfflineLlm
from evals.models import EvalCase, EvalSet
from tests.agents import fake_openai as fake

MODEL_NAME = f"openai/{fake.MODEL}"


def invocation(text, *, calls=(), answer=""):
    """An ADK Invocation (JSON): a user turn, tool calls with recorded results
    (name, args, response), the final answer."""
    uses = [
        {"id": f"c{i}", "name": name, "args": args}
        for i, (name, args, _) in enumerate(calls)
    ]
    responses = [
        {"id": f"c{i}", "name": name, "response": response}
        for i, (name, _, response) in enumerate(calls)
    ]
    return {
        "invocation_id": "",
        "user_content": {"role": "user", "parts": [{"text": text}]},
        "intermediate_data": {"tool_uses": uses, "tool_responses": responses},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
    }


RECORDED_LONDON = {"status": "success", "report": "Recorded: London is foggy."}


@pytest.fixture
def weather_set(alice):
    """A set of alice's with one case: London's weather, its call recorded."""
    return make_weather_set(alice)


def make_weather_set(owner):
    eval_set = EvalSet.objects.create(
        owner=owner,
        name="weather",
        criteria={
            "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "EXACT"},
            "response_match_score": 0.5,
        },
    )
    EvalCase.objects.create(
        eval_set=eval_set,
        eval_id="london",
        conversation=[
            invocation(
                "weather in london?",
                calls=[("get_weather_report", {"city": "London"}, RECORDED_LONDON)],
                answer="London is foggy today.",
            )
        ],
        session_input={"app_name": "weather_sentiment", "user_id": "u", "state": {}},
    )
    return eval_set


@pytest.fixture
def provider(settings):
    """The scripted OpenAI-compatible server as the default model."""
    settings.TOOLCRIB_MODEL_RETRIES = 0
    settings.TOOLCRIB_MODEL_TIMEOUT = 5
    settings.TOOLCRIB_DEFAULT_MODEL = MODEL_NAME
    LlmAgent.set_default_model(MODEL_NAME)
    with fake.FakeOpenAI() as server:
        settings.TOOLCRIB_PROVIDER_ENV = server.env()
        yield server
    LlmAgent.set_default_model(OfflineLlm(model="offline/demo"))
