"""A connection staff mark "granted only" on the Models page (`granted_only` over
/api/providers/) serves its models only to users and groups a model grant allows,
as a toolset's "granted only" policy does; switched off, they are open again. The
switch holds from the next model step in every process (it bumps the grants'
version) and is in the change audit."""

import pytest
from django.contrib.auth.models import Group
from google.adk.agents import LlmAgent

from agents import model_grants
from agents.adk.offline import OfflineLlm
from agents.connections import save_model
from agents.model_grants import explain, grant_model
from agents.model_table import forget
from agents.models import AgentSpec, Change, ModelConnection
from tests.agents import fake_openai as fake

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = f"lab/{fake.MODEL}"


@pytest.fixture
def staff(make_user):
    return make_user("root", is_staff=True)


@pytest.fixture
def lab(settings, staff, api_for):
    """The connection `lab`, added by staff over the API, to the scripted server."""
    forget()
    model_grants.forget()
    settings.TOOLCRIB_MODEL_RETRIES = 0
    settings.TOOLCRIB_MODEL_TIMEOUT = 5
    settings.TOOLCRIB_PROVIDER_ENV = {}
    with fake.FakeOpenAI() as server:
        added = api_for(staff).post(
            "/api/providers/",
            {
                "name": "lab",
                "kind": "openai_compatible",
                "base_url": server.url,
                "api_key": fake.API_KEY,
            },
            format="json",
        )
        assert added.status_code == 201, added.content
        assert added.json()["granted_only"] is False
        save_model(owner=ModelConnection.objects.get(name="lab"), model=fake.MODEL)
        AgentSpec.objects.create(
            name="labbot", description="On lab.", instruction="Answer.", model=MODEL
        )
        yield server
    LlmAgent.set_default_model(OfflineLlm(model="offline/demo"))
    forget()
    model_grants.forget()


def granted_only(api, value: bool):
    response = api.patch("/api/providers/lab/", {"granted_only": value}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_granted_only_connection_serves_only_those_a_grant_allows(
    lab, staff, alice, bob, api_for, start_session, say
):
    interns = Group.objects.create(name="interns")
    alice.groups.add(interns)
    grant_model(model="lab/*", effect="allow", group=interns)
    alices, bobs = start_session(alice, "labbot"), start_session(bob, "labbot")
    lab.play(fake.say("open"), fake.say("alice's"), fake.say("open again"))
    assert say(bob, bobs, "before")["status"] == "succeeded"  # open: warm caches

    assert granted_only(api_for(staff), True)["granted_only"] is True

    refused = say(bob, bobs, "hello")
    assert refused["status"] == "failed"
    assert len(lab.requests) == 1  # bob's refused step never reached the server
    assert refused["error"] == (
        f"You may not use the model {MODEL}: its connection lab is granted only, "
        "and no grant allows it to you or your groups."
    )
    assert say(alice, alices, "hello")["status"] == "succeeded"

    granted_only(api_for(staff), False)

    assert say(bob, bobs, "again")["status"] == "succeeded"


def test_the_switch_is_in_the_change_audit_and_on_the_connection(
    lab, staff, api_for
):
    granted_only(api_for(staff), True)

    change = Change.objects.filter(kind="agents.modelconnection").latest("id")
    assert change.actor == staff
    assert change.action == "update"
    assert change.changes["granted_only"] == [False, True]
    assert api_for(staff).get("/api/providers/lab/").json()["granted_only"] is True


def test_other_connections_and_bare_names_stay_open(lab, staff, alice, api_for):
    granted_only(api_for(staff), True)

    assert not explain(user_id=alice.pk, model=MODEL).allowed
    assert explain(user_id=alice.pk, model="openai/gpt-4o-mini").allowed
    assert explain(user_id=alice.pk, model="gemini-2.5-flash").allowed
    # A connection whose name begins like lab's is another connection.
    assert explain(user_id=alice.pk, model="labs/x").allowed


def test_a_user_deny_still_beats_a_group_allow_on_a_granted_only_connection(
    lab, staff, alice, api_for
):
    interns = Group.objects.create(name="interns")
    alice.groups.add(interns)
    grant_model(model="lab/*", effect="allow", group=interns)
    deny, _ = grant_model(model=MODEL, effect="deny", user=alice)
    granted_only(api_for(staff), True)

    decision = explain(user_id=alice.pk, model=MODEL)

    assert not decision.allowed
    assert decision.grant_id == deny.pk


def test_a_non_boolean_is_a_400_on_the_field(lab, staff, api_for):
    response = api_for(staff).patch(
        "/api/providers/lab/", {"granted_only": "sometimes"}, format="json"
    )

    assert response.status_code == 400
    assert "granted_only" in response.json()
    assert ModelConnection.objects.get(name="lab").granted_only is False
