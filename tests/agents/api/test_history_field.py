"""An agent's history through the agents API: a number of events, or null for all."""

import pytest

from agents.inputs import HISTORY_MAX
from agents.models import HISTORY_DEFAULT

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user):
    return make_user("staff", is_staff=True)


def create(api_for, user, **fields):
    body = {"name": "helper", "instruction": "Help.", **fields}
    return api_for(user).post("/api/agents/", body, format="json")


def test_a_new_agent_reads_the_default_history(staff, api_for):
    created = create(api_for, staff)

    assert created.status_code == 201, created.content
    assert created.json()["history"] == HISTORY_DEFAULT


def test_staff_bound_the_history_or_lift_the_bound(staff, alice, api_for):
    create(api_for, staff, history=40)

    lifted = api_for(staff).patch("/api/agents/helper/", {"history": None}, "json")

    assert lifted.status_code == 200, lifted.content
    assert api_for(alice).get("/api/agents/helper/").json()["history"] is None


@pytest.mark.parametrize("history", [0, -1, HISTORY_MAX + 1, "40", 4.5, True, [40]])
def test_a_bad_history_is_400_with_a_field_error(staff, api_for, history):
    response = create(api_for, staff, history=history)

    assert response.status_code == 400
    assert "history" in response.json(), response.content


def test_only_staff_change_an_agents_history(staff, alice, api_for):
    create(api_for, staff, history=40)

    changed = api_for(alice).patch("/api/agents/helper/", {"history": 5}, "json")

    assert changed.status_code == 403
    assert api_for(alice).get("/api/agents/helper/").json()["history"] == 40


def test_a_code_agents_history_is_changed_in_code(staff, api_for, demo_agents):
    changed = api_for(staff).patch(
        "/api/agents/customer_support/", {"history": 5}, "json"
    )

    assert changed.status_code == 400
    assert api_for(staff).get("/api/agents/customer_support/").json()["history"] == (
        HISTORY_DEFAULT
    )
