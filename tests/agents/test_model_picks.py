"""A session's user picks among the models its agent offers and she is granted;
the next turn runs on the pick (the scripted server sees the model asked for); a
refused pick says why, and a grant taken away holds from the next model step, in
the middle of a turn or between turns."""

import pytest
from google.adk.agents import LlmAgent

from agents import model_grants
from agents.adk.builder import sync_code_agents
from agents.adk.offline import OfflineLlm
from agents.connections import save_connection, save_model
from agents.model_grants import grant_model
from agents.model_table import forget
from agents.models import AgentSpec, ModelGrant
from tests.agents import fake_openai as fake

pytestmark = pytest.mark.django_db(transaction=True)

SMALL = f"lab/{fake.MODEL}"
BIG = "lab/fake-big"


@pytest.fixture
def lab(settings, db):
    """A connection to the local scripted server, serving two models."""
    forget()
    model_grants.forget()
    settings.TOOLCRIB_MODEL_RETRIES = 0
    settings.TOOLCRIB_MODEL_TIMEOUT = 5
    settings.TOOLCRIB_PROVIDER_ENV = {}
    with fake.FakeOpenAI() as server:
        server.models = [fake.MODEL, "fake-big"]
        connection = save_connection(
            connection=None,
            fields={"name": "lab", "kind": "openai_compatible", "base_url": server.url},
            key=fake.API_KEY,
        )
        save_model(owner=connection, model=fake.MODEL)
        save_model(owner=connection, model="fake-big")
        yield server
    LlmAgent.set_default_model(OfflineLlm(model="offline/demo"))
    forget()
    model_grants.forget()


@pytest.fixture
def picker(lab):
    return AgentSpec.objects.create(
        name="picker",
        description="Answers on the model you pick.",
        instruction="Answer briefly.",
        model=SMALL,
        model_choices=[BIG],
    )


def pick(api, session: str, model: str):
    return api.patch(f"/api/sessions/{session}/", {"model": model}, format="json")


def test_the_next_turn_runs_on_the_model_picked(
    alice, picker, lab, api_for, start_session, say
):
    session = start_session(alice, "picker")
    api = api_for(alice)
    lab.play(fake.say("small answers"), fake.say("big answers"))

    models = api.get(f"/api/sessions/{session}/models/").json()
    assert models == {
        "model": None,
        "picker": True,
        "options": [{"name": SMALL, "default": True}, {"name": BIG, "default": False}],
    }
    first = say(alice, session, "hello")
    picked = pick(api, session, BIG)
    second = say(alice, session, "hello again")

    assert picked.status_code == 200, picked.content
    assert picked.json()["model"] == BIG
    assert first["status"] == second["status"] == "succeeded", second["error"]
    assert [r.body["model"] for r in lab.requests] == [fake.MODEL, "fake-big"]
    assert second["stats"]["model"] == BIG


def test_a_model_the_agent_does_not_offer_is_refused_with_why(
    alice, picker, api_for, start_session
):
    session = start_session(alice, "picker")

    response = pick(api_for(alice), session, "openai/gpt-4o")

    assert response.status_code == 400
    assert response.json() == {
        "model": [
            "The agent picker does not offer the model openai/gpt-4o (it offers "
            f"{SMALL}, {BIG})."
        ]
    }


def test_a_model_not_granted_is_neither_listed_nor_picked(
    alice, picker, api_for, start_session
):
    deny, _ = grant_model(model=BIG, effect="deny", user=alice)
    session = start_session(alice, "picker")
    api = api_for(alice)

    models = api.get(f"/api/sessions/{session}/models/").json()
    response = pick(api, session, BIG)

    assert models["options"] == [{"name": SMALL, "default": True}]
    assert models["picker"] is False
    assert response.status_code == 400
    assert response.json() == {
        "model": [
            f"You may not use the model {BIG}: denied by grant #{deny.pk} "
            f"(user alice on {BIG})."
        ]
    }


def test_a_grant_taken_away_after_the_pick_refuses_the_next_turn(
    alice, picker, lab, api_for, start_session, say, events_of
):
    session = start_session(alice, "picker")
    assert pick(api_for(alice), session, BIG).status_code == 200
    deny, _ = grant_model(model="lab/*", effect="deny", user=alice)

    run = say(alice, session, "hello")

    assert run["status"] == "failed"
    assert run["error"] == (
        f"You may not use the model {BIG}: denied by grant #{deny.pk} "
        "(user alice on lab/*)."
    )
    assert lab.requests == []
    frames = [f["event"] for f in events_of(alice, session)]
    assert [f["kind"] for f in frames] == ["run_started", "error", "run_finished"]
    assert frames[1]["error"]["code"] == "MODEL_NOT_GRANTED"


def test_going_back_to_the_agents_own_model(
    alice, picker, lab, api_for, start_session, say
):
    session = start_session(alice, "picker")
    api = api_for(alice)
    pick(api, session, BIG)
    lab.play(fake.say("small again"))

    back = pick(api, session, "")
    run = say(alice, session, "hello")

    assert back.json()["model"] is None
    assert run["status"] == "succeeded", run["error"]
    assert [r.body["model"] for r in lab.requests] == [fake.MODEL]


def test_a_grant_revoked_between_two_model_steps_ends_the_turn_at_the_second(
    alice, lab, settings, start_session, say
):
    settings.TOOLCRIB_AGENTS = [
        *settings.TOOLCRIB_AGENTS,
        "tests.agents.model_grant_agents.revoked_mid_turn",
    ]
    sync_code_agents()
    session = start_session(alice, "revoked_mid_turn")
    lab.play(fake.call("take_the_model_away"), fake.say("never sent"))

    run = say(alice, session, "go")

    deny = ModelGrant.objects.get()
    assert run["status"] == "failed"
    assert run["error"] == (
        f"You may not use the model {SMALL}: denied by grant #{deny.pk} "
        f"(user alice on {SMALL})."
    )
    assert len(lab.requests) == 1
