"""An agent's retention through the agents API: days, 0 for forever, or null for
the setting; staff set it, on a code agent too."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user):
    return make_user("staff", is_staff=True)


def test_staff_set_a_code_agents_retention_and_give_it_back_to_the_setting(
    staff, alice, api_for, demo_agents
):
    url = "/api/agents/customer_support/"

    set_ = api_for(staff).patch(url, {"retention_days": 90}, "json")
    seen = api_for(alice).get(url).json()["retention_days"]
    back = api_for(staff).patch(url, {"retention_days": None}, "json")

    assert set_.status_code == 200, set_.content
    assert seen == 90
    assert back.json()["retention_days"] is None


@pytest.mark.parametrize("days", [-1, 36_501, "90", 4.5, True, [90]])
def test_a_bad_retention_is_400_with_a_field_error(staff, api_for, demo_agents, days):
    response = api_for(staff).patch(
        "/api/agents/customer_support/", {"retention_days": days}, "json"
    )

    assert response.status_code == 400
    assert "retention_days" in response.json(), response.content


def test_only_staff_change_an_agents_retention(alice, api_for, demo_agents):
    url = "/api/agents/customer_support/"

    changed = api_for(alice).patch(url, {"retention_days": 1}, "json")

    assert changed.status_code == 403
    assert api_for(alice).get(url).json()["retention_days"] is None
