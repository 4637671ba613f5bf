"""A model connection's key is write-only: it never comes back from the API, the
schema, the change audit, the logs or a turn's events; and only staff reach
/api/providers/ at all."""

import logging

import pytest
from google.adk.agents import LlmAgent

from agents.adk.offline import OfflineLlm
from agents.model_table import forget
from tests.agents import fake_openai as fake

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "sk-planted-provider-key-7f3a"


@pytest.fixture(autouse=True)
def _fresh_table():
    forget()
    yield
    forget()


@pytest.fixture
def staff(make_user):
    return make_user("root", is_staff=True)


@pytest.fixture
def server(settings):
    settings.TOOLCRIB_MODEL_RETRIES = 0
    settings.TOOLCRIB_MODEL_TIMEOUT = 5
    settings.TOOLCRIB_PROVIDER_ENV = {}
    settings.TOOLCRIB_DEFAULT_MODEL = f"lab/{fake.MODEL}"
    LlmAgent.set_default_model(f"lab/{fake.MODEL}")
    with fake.FakeOpenAI(api_key=KEY) as running:
        yield running
    LlmAgent.set_default_model(OfflineLlm(model="offline/demo"))


def add_lab(api, server, key=KEY):
    body = {
        "name": "lab",
        "kind": "openai_compatible",
        "base_url": server.url,
        "api_key": key,
    }
    return api.post("/api/providers/", body, format="json")


def test_the_key_leaves_through_no_outlet(
    staff, alice, demo_agents, api_for, start_session, say, events_of, server, caplog
):
    caplog.set_level(logging.DEBUG)
    api = api_for(staff)
    outlets = [add_lab(api, server).content.decode()]
    api.patch("/api/providers/lab/", {"api_key": KEY + "-2"}, format="json")
    server.api_key = KEY + "-2"
    server.play(fake.say("OK"), fake.say("Hello."))
    outlets.append(
        api.post("/api/providers/lab/test/", {"model": fake.MODEL}).content.decode()
    )
    session = start_session(alice, "weather_sentiment")
    run = say(alice, session, "hello")
    assert run["status"] == "succeeded", run["error"]
    # A failed call (a wrong key) says what failed, never what was sent.
    api.patch("/api/providers/lab/", {"api_key": KEY + "-bad"}, format="json")
    outlets.append(
        api.post("/api/providers/lab/test/", {"model": fake.MODEL}).content.decode()
    )
    failed = say(alice, session, "again")
    assert failed["status"] == "failed"

    outlets += [
        api.get("/api/providers/").content.decode(),
        api.get("/api/providers/lab/").content.decode(),
        api.get("/api/schema/").content.decode(),
        api.get("/api/changes/").content.decode(),
        str(events_of(alice, session)),
        api_for(alice).get(f"/api/sessions/{session}/").content.decode(),
        caplog.text,
    ]
    for outlet in outlets:
        assert KEY not in outlet
    changes = api.get("/api/changes/").json()["results"]
    keyed = [c for c in changes if "sealed_key" in (c["changes"] or {})]
    assert keyed and all(
        value in (None, "[hidden]")
        for change in keyed
        for value in change["changes"]["sealed_key"]
    )
    assert any(c["action"] == "tested" for c in changes)


def test_the_schema_takes_the_key_and_never_gives_it(staff, api_for):
    schemas = (
        api_for(staff).get("/api/schema/?format=json").json()["components"]["schemas"]
    )

    assert "api_key" in schemas["ConnectionRequest"]["properties"]
    assert "api_key" not in schemas["Connection"]["properties"]
    assert "has_key" in schemas["Connection"]["properties"]


def test_someone_not_staff_cannot_list_add_or_test_connections(
    staff, alice, api_for, server
):
    add_lab(api_for(staff), server)
    api = api_for(alice)

    assert api.get("/api/providers/").status_code == 403
    assert api.get("/api/providers/lab/").status_code == 403
    assert api.post("/api/providers/lab/test/").status_code == 403
    assert api.get("/api/providers/lab/models/").status_code == 403
    assert add_lab(api, server, key="sk-mine").status_code == 403
    assert api.delete("/api/providers/lab/").status_code == 403
    assert server.requests == []
