"""An Ollama connection made on the Models page, against a local Ollama server.

LiteLLM must call it as `ollama_chat` (Ollama's /api/chat, where tools work), and
ADK must shape the messages for it: Ollama refuses a message whose content is
not a string. The server is tests/agents/fake_ollama.py, over real HTTP.
"""

import pytest
from google.adk.agents import LlmAgent

from agents.adk.offline import OfflineLlm
from agents.model_table import forget
from tests.agents import fake_ollama as fake

pytestmark = pytest.mark.django_db(transaction=True)

MODEL_NAME = f"home/{fake.MODEL}"


@pytest.fixture(autouse=True)
def _fresh_table():
    forget()
    yield
    forget()


@pytest.fixture
def ollama(settings):
    """The local Ollama; agents run on `home/llama3.2:1b`."""
    settings.TOOLCRIB_MODEL_RETRIES = 0
    settings.TOOLCRIB_MODEL_TIMEOUT = 5
    settings.TOOLCRIB_PROVIDER_ENV = {}
    settings.TOOLCRIB_DEFAULT_MODEL = MODEL_NAME
    LlmAgent.set_default_model(MODEL_NAME)
    with fake.FakeOllama() as running:
        yield running
    LlmAgent.set_default_model(OfflineLlm(model="offline/demo"))


@pytest.fixture
def connected(make_user, api_for, ollama):
    """Staff connected the local Ollama as `home` and fetched its models."""
    api = api_for(make_user("root", is_staff=True))
    added = api.post(
        "/api/providers/",
        {"name": "home", "kind": "ollama", "base_url": ollama.url},
        format="json",
    )
    assert added.status_code == 201, added.json()
    fetched = api.post("/api/providers/home/models/fetch/")
    assert [m["full_name"] for m in fetched.json()] == [MODEL_NAME]
    return api


def test_a_tool_call_through_an_ollama_connection_completes_the_turn(
    alice, demo_agents, start_session, say, events_of, ollama, connected
):
    ollama.play(
        fake.call("get_weather_report", city="Oslo"),
        fake.say("Oslo is cold today."),
    )
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "weather in oslo?")

    assert ollama.refusals == []
    assert run["status"] == "succeeded", run["error"]
    frames = [f["event"] for f in events_of(alice, session)]
    call = next(f for f in frames if f["kind"] == "function_call")
    assert call["function_calls"][0]["args"] == {"city": "Oslo"}
    assert frames[-2]["text"] == "Oslo is cold today."
    first, second = ollama.requests
    assert first["model"] == fake.MODEL
    assert "get_weather_report" in [t["function"]["name"] for t in first["tools"]]
    assert all(isinstance(m["content"], str) for m in second["messages"])
    assert second["messages"][-1]["role"] == "tool"


def test_test_reaches_the_ollama_server(ollama, connected):
    ollama.play(fake.say("OK"))

    result = connected.post(
        "/api/providers/home/test/", {"model": fake.MODEL}, format="json"
    ).json()

    assert result["ok"] is True, result
    assert ollama.requests[-1]["model"] == fake.MODEL
