"""Turns on a real provider path: ADK's LiteLlm over HTTP to a local OpenAI-compatible server.

The demo agents set no model, so they run on TOOLCRIB_DEFAULT_MODEL, here
``openai/fake-gpt`` with OPENAI_API_BASE pointing at tests/agents/fake_openai.py.
"""

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from google.adk.agents import LlmAgent

from agents.adk.offline import OfflineLlm
from agents.events.wire import EventFrame
from agents.models import Run
from agents.tokens import issue_token
from project.asgi import application
from tests.agents import fake_openai as fake

pytestmark = pytest.mark.django_db(transaction=True)

MODEL_NAME = f"openai/{fake.MODEL}"


@pytest.fixture
def provider(settings):
    """The local server, configured as the openai provider and the default model."""
    settings.TOOLCRIB_MODEL_RETRIES = 0
    settings.TOOLCRIB_MODEL_TIMEOUT = 5
    settings.TOOLCRIB_DEFAULT_MODEL = MODEL_NAME
    LlmAgent.set_default_model(MODEL_NAME)
    with fake.FakeOpenAI() as server:
        settings.TOOLCRIB_PROVIDER_ENV = server.env()
        yield server
    LlmAgent.set_default_model(OfflineLlm(model="offline/demo"))


def kinds(frames: list[dict]) -> list[str]:
    return [frame["event"]["kind"] for frame in frames]


def error_of(frames: list[dict]) -> dict:
    """The run's own error (author system), as the user reads it."""
    return next(
        f["event"]["error"]
        for f in frames
        if f["event"]["kind"] == "error" and f["event"]["author"] == "system"
    )


def test_weather_turn_with_two_tool_calls_over_http(
    alice, demo_agents, start_session, say, events_of, api_for, provider
):
    provider.play(
        fake.call("get_weather_report", city="London", usage=(120, 9)),
        fake.call("get_weather_report", city="Paris", usage=(160, 9)),
        fake.say("London is cloudy and Paris is sunny.", usage=(200, 8)),
    )
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "weather in london and paris?")

    assert run["status"] == "succeeded", run["error"]
    assert (run["prompt_tokens"], run["completion_tokens"], run["total_tokens"]) == (
        480,
        26,
        506,
    )
    frames = events_of(alice, session)
    assert kinds(frames) == [
        "run_started",
        "user_message",
        "function_call",
        "function_response",
        "function_call",
        "function_response",
        "text",
        "run_finished",
    ]
    calls = [f["event"]["function_calls"][0] for f in frames[2:6:2]]
    assert [(c["name"], c["args"]) for c in calls] == [
        ("get_weather_report", {"city": "London"}),
        ("get_weather_report", {"city": "Paris"}),
    ]
    results = [f["event"]["function_responses"][0]["response"] for f in frames[3:6:2]]
    assert "cloudy" in results[0]["report"] and "sunny" in results[1]["report"]
    assert frames[6]["event"]["text"] == "London is cloudy and Paris is sunny."
    assert frames[6]["event"]["usage"]["total_tokens"] == 208

    first, second, third = provider.requests
    assert first.headers["authorization"] == f"Bearer {provider.api_key}"
    assert first.body["model"] == fake.MODEL and first.body["stream"] is True
    assert set(first.tool_names) >= {"get_weather_report", "analyze_sentiment"}
    assert first.messages[0]["role"] == "system"
    assert first.messages[-1] == {
        "role": "user",
        "content": "weather in london and paris?",
    }
    tool_result = third.messages[-1]
    assert tool_result["role"] == "tool" and "sunny" in tool_result["content"]
    assert second.messages[-1]["tool_call_id"] == "call_0_get_weather_report"

    detail = api_for(alice).get(f"/api/runs/{run['id']}/").json()
    assert detail["total_tokens"] == 506


def test_agents_api_shows_the_model_and_that_it_is_configured(
    alice, demo_agents, api_for, provider, settings
):
    info = api_for(alice).get("/api/agents/weather_sentiment/").json()["model_info"]
    assert info == {
        "name": MODEL_NAME,
        "provider": "openai",
        "offline": False,
        "label": MODEL_NAME,
        "configured": True,
        "missing": [],
        "problem": "",
    }

    settings.TOOLCRIB_PROVIDER_ENV = {}
    info = api_for(alice).get("/api/agents/weather_sentiment/").json()["model_info"]
    assert info["configured"] is False and info["missing"] == ["OPENAI_API_KEY"]


def test_turn_without_a_key_fails_at_once_naming_the_variable(
    alice, demo_agents, start_session, say, events_of, provider, settings
):
    settings.TOOLCRIB_PROVIDER_ENV = {}
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "weather in london?")

    assert run["status"] == "failed"
    assert "OPENAI_API_KEY" in run["error"]
    frames = events_of(alice, session)
    assert kinds(frames) == ["run_started", "error", "run_finished"]
    error = error_of(frames)
    assert error["code"] == "MODEL_NOT_CONFIGURED"
    assert "OPENAI_API_KEY" in error["message"]
    assert provider.requests == []


@pytest.mark.parametrize(
    ("failure", "code", "words"),
    [
        (
            fake.fail(500, "upstream exploded"),
            "MODEL_PROVIDER_ERROR",
            "upstream exploded",
        ),
        (fake.stall(5), "MODEL_TIMEOUT", "did not answer within 0.5 seconds"),
    ],
    ids=["http-500", "timeout"],
)
def test_provider_failure_mid_turn_fails_the_run_and_keeps_what_was_stored(
    alice,
    demo_agents,
    start_session,
    say,
    events_of,
    provider,
    settings,
    failure,
    code,
    words,
):
    settings.TOOLCRIB_MODEL_TIMEOUT = 0.5
    provider.play(
        fake.say("Hello!"), fake.call("get_weather_report", city="London"), failure
    )
    session = start_session(alice, "weather_sentiment")
    assert say(alice, session, "hi")["status"] == "succeeded"
    before = events_of(alice, session)

    run = say(alice, session, "weather in london?")

    assert run["status"] == "failed"
    after = events_of(alice, session)
    assert after[: len(before)] == before
    turn = after[len(before) :]
    assert kinds(turn)[:4] == [
        "run_started",
        "user_message",
        "function_call",
        "function_response",
    ]
    assert kinds(turn)[-2:] == ["error", "run_finished"]
    error = error_of(turn)
    assert error["code"] == code
    assert words in error["message"] and MODEL_NAME in error["message"]
    assert run["error"] == error["message"]
    assert run["total_tokens"] == 15  # the call that succeeded still counts
    assert len(provider.requests) == 3


def test_rejected_key_fails_the_run_with_a_clear_error(
    alice, demo_agents, start_session, say, events_of, provider, settings
):
    settings.TOOLCRIB_PROVIDER_ENV = provider.env(OPENAI_API_KEY="sk-wrong")
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "weather in london?")

    assert run["status"] == "failed"
    error = error_of(events_of(alice, session))
    assert error["code"] == "MODEL_AUTH_FAILED"
    assert "HTTP 401" in error["message"] and "OPENAI_API_KEY" in error["message"]
    assert provider.requests[0].headers["authorization"] == "Bearer sk-wrong"


def test_row_agent_with_its_own_model_uses_it(
    alice, make_user, start_session, say, api_for, provider, settings
):
    settings.TOOLCRIB_DEFAULT_MODEL = "offline/demo"
    LlmAgent.set_default_model(OfflineLlm(model="offline/demo"))
    staff = make_user(is_staff=True)
    created = api_for(staff).post(
        "/api/agents/",
        {"name": "poet", "instruction": "Write verse.", "model": MODEL_NAME},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["model_info"]["configured"] is True
    provider.play(fake.say("Roses are red."))
    session = start_session(alice, "poet")

    run = say(alice, session, "a poem please")

    assert run["status"] == "succeeded"
    assert provider.requests[0].body["model"] == fake.MODEL


async def test_model_text_streams_to_the_socket_as_partial_frames(
    alice, demo_agents, start_session, provider
):
    provider.play(fake.say("The weather is lovely in London today, enjoy it."))
    session = await sync_to_async(start_session)(alice, "weather_sentiment")
    token = await sync_to_async(issue_token)(user=alice)
    socket = WebsocketCommunicator(
        application,
        f"/ws/sessions/{session}/",
        headers=[(b"authorization", f"Token {token}".encode())],
    )
    assert (await socket.connect(timeout=10))[0]

    await socket.send_json_to({"type": "message", "text": "how is it?"})

    frames = []
    while True:
        frame = await socket.receive_json_from(timeout=20)
        if frame["type"] != "event":
            continue
        EventFrame.model_validate(frame)
        frames.append(frame)
        if frame["event"]["kind"] == "run_finished":
            break
    await socket.disconnect()
    partials = [f for f in frames if f["seq"] is None]
    final = next(f for f in frames if f["event"]["kind"] == "text" and f["seq"])
    assert len(partials) == 9  # one per word, as the server streamed them
    assert all(f["event"]["partial"] for f in partials)
    assert "".join(f["event"]["text"] for f in partials) == final["event"]["text"]
    assert final["event"]["text"] == "The weather is lovely in London today, enjoy it."
    run = await Run.objects.aget(session_id=session)
    assert run.total_tokens == 15
