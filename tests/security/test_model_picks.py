"""Only a session's owner picks its model: another user cannot see or change it
(404, as any session not hers), staff who may open it cannot pick for her (403),
and a pick is checked against her grants, never the picker's. Model grants are
staff's: anyone else is refused before anything is read or written."""

import pytest

from agents import model_grants
from agents.model_grants import grant_model
from agents.models import AgentSpec, ModelGrant, Session

pytestmark = pytest.mark.django_db

OWN = "offline/demo"
OTHER = "offline/other"


@pytest.fixture(autouse=True)
def _fresh():
    model_grants.forget()
    yield
    model_grants.forget()


@pytest.fixture
def alices_session(alice, start_session):
    AgentSpec.objects.create(
        name="picker", instruction="Answer.", model=OWN, model_choices=[OTHER]
    )
    return start_session(alice, "picker")


def test_another_user_cannot_read_or_set_the_model_of_her_session(
    bob, alices_session, api_for
):
    api = api_for(bob)

    listed = api.get(f"/api/sessions/{alices_session}/models/")
    picked = api.patch(
        f"/api/sessions/{alices_session}/", {"model": OTHER}, format="json"
    )

    assert listed.status_code == 404
    assert picked.status_code == 404
    assert Session.objects.get(pk=alices_session).model is None


def test_staff_who_may_open_her_session_cannot_pick_its_model(
    make_user, alices_session, api_for
):
    root = make_user("root", is_staff=True)

    picked = api_for(root).patch(
        f"/api/sessions/{alices_session}/", {"model": OTHER}, format="json"
    )

    assert picked.status_code == 403
    assert picked.json() == {"detail": "Only the session's owner picks its model."}
    assert Session.objects.get(pk=alices_session).model is None


def test_a_pick_is_checked_against_the_owners_grants(alice, alices_session, api_for):
    grant_model(model=OTHER, effect="deny", user=alice)

    picked = api_for(alice).patch(
        f"/api/sessions/{alices_session}/", {"model": OTHER}, format="json"
    )

    assert picked.status_code == 400
    assert Session.objects.get(pk=alices_session).model is None


@pytest.mark.parametrize("value", [7, ["offline/other"], {"m": 1}, "x" * 261])
def test_a_model_that_is_not_a_short_string_is_a_400(
    alice, alices_session, api_for, value
):
    picked = api_for(alice).patch(
        f"/api/sessions/{alices_session}/", {"model": value}, format="json"
    )

    assert picked.status_code == 400
    assert "model" in picked.json()


def test_non_staff_cannot_read_or_change_model_grants(alice, bob, api_for):
    grant, _ = grant_model(model=OTHER, effect="deny", user=bob)
    api = api_for(alice)

    assert api.get("/api/model-grants/").status_code == 403
    assert api.get(f"/api/model-grants/{grant.pk}/").status_code == 403
    assert api.delete(f"/api/model-grants/{grant.pk}/").status_code == 403
    assert (
        api.patch(
            f"/api/model-grants/{grant.pk}/", {"effect": "allow"}, format="json"
        ).status_code
        == 403
    )
    assert ModelGrant.objects.get().effect == "deny"
