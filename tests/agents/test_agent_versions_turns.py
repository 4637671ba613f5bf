"""Saved agents on real turns: the model reads the instruction of the latest save on
the next turn, a draft's session reads the draft's, and an agent given single tools
of a toolset is offered those only (a local OpenAI-compatible server records what
the model was sent)."""

import pytest
from google.adk.agents import LlmAgent

from agents.adk.offline import OfflineLlm
from tests.agents import fake_openai as fake
from tests.agents import tools as lab_tools

pytestmark = pytest.mark.django_db(transaction=True)

MODEL_NAME = f"openai/{fake.MODEL}"


@pytest.fixture
def provider(settings):
    settings.TOOLCRIB_MODEL_RETRIES = 0
    settings.TOOLCRIB_MODEL_TIMEOUT = 5
    with fake.FakeOpenAI() as server:
        settings.TOOLCRIB_PROVIDER_ENV = server.env()
        yield server
    LlmAgent.set_default_model(OfflineLlm(model="offline/demo"))


@pytest.fixture
def root(make_user):
    return make_user("root", is_staff=True)


@pytest.fixture
def admin(root, api_for):
    return api_for(root)


def system_text(received) -> str:
    return " ".join(
        m["content"] if isinstance(m["content"], str) else str(m["content"])
        for m in received.messages
        if m["role"] == "system"
    )


def test_next_turn_reads_the_saved_instruction(
    admin, alice, provider, start_session, say
):
    created = admin.post(
        "/api/agents/",
        {"name": "helper", "model": MODEL_NAME, "instruction": "Speak like a pirate."},
        format="json",
    )
    assert created.status_code == 201, created.content
    session = start_session(alice, "helper")
    provider.play(fake.say("Arr."), fake.say("Bonjour."))

    assert say(alice, session, "hello")["status"] == "succeeded"
    admin.patch(
        "/api/agents/helper/", {"instruction": "Answer in French."}, format="json"
    )
    assert say(alice, session, "hello again")["status"] == "succeeded"

    first, second = provider.requests
    assert "Speak like a pirate." in system_text(first)
    assert "Answer in French." in system_text(second)
    assert "pirate" not in system_text(second)


def test_a_draft_session_reads_the_draft_and_others_the_published(
    admin, root, alice, provider, start_session, say
):
    admin.post(
        "/api/agents/",
        {"name": "helper", "model": MODEL_NAME, "instruction": "Published words."},
        format="json",
    )
    admin.patch(
        "/api/agents/helper/draft/", {"instruction": "Draft words."}, format="json"
    )
    tried = admin.post(
        "/api/sessions/", {"agent": "helper", "draft": True}, format="json"
    )
    assert tried.status_code == 201, tried.content
    provider.play(fake.say("ok"), fake.say("ok"))

    assert say(root, tried.json()["id"], "hi")["status"] == "succeeded"
    assert say(alice, start_session(alice, "helper"), "hi")["status"] == "succeeded"

    draft_turn, published_turn = provider.requests
    assert "Draft words." in system_text(draft_turn)
    assert "Published words." in system_text(published_turn)


def test_single_tools_are_the_only_ones_offered(
    admin, alice, provider, start_session, say, settings
):
    # A module of three functions, and the built-in math toolset (a BaseToolset).
    settings.TOOLCRIB_TOOLSETS = {
        **settings.TOOLCRIB_TOOLSETS,
        "lab": lab_tools.__name__,
    }
    created = admin.post(
        "/api/agents/",
        {
            "name": "reader",
            "model": MODEL_NAME,
            "tools": [
                {"toolset": "lab", "tool": "count_users"},
                {"toolset": "math", "tool": "calculate"},
            ],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    provider.play(fake.say("ok"))

    assert say(alice, start_session(alice, "reader"), "hi")["status"] == "succeeded"

    assert sorted(provider.requests[0].tool_names) == ["calculate", "count_users"]
