"""A group's name may not look like another's: staff cannot make `mаnagers` (a
Cyrillic а) beside `managers`.

Grants, budgets and approvals name groups, and a person picking `managers` from a
list must get the real one. The attackers' finding: staff could create `mаnagers`
beside `managers`. Now a name equal to an existing one after NFKC, case folding
and Unicode's confusables skeleton (TR39) is a 400 on `name`, naming the group it
looks like; on create, on rename, and in the admin.
"""

import pytest
from django.contrib.auth.models import Group

from toolsets import groups

pytestmark = pytest.mark.django_db

LOOKALIKES = {
    "Cyrillic а": "m\u0430nagers",
    "Cyrillic е": "manag\u0435rs",
    "fullwidth ｍ": "\uff4danagers",
    "rn for m": "rnanagers",
    "upper case": "MANAGERS",
    "a zero-width space": "mana\u200bgers",
    "mathematical bold 𝐦": "\U0001d426anagers",
}


@pytest.fixture
def staff(make_user):
    return make_user("root", is_staff=True)


@pytest.fixture
def managers(db):
    return Group.objects.create(name="managers")


@pytest.mark.parametrize("name", LOOKALIKES.values(), ids=LOOKALIKES)
def test_a_name_that_looks_like_a_group_is_refused_on_create(
    api_for, staff, managers, name
):
    answer = api_for(staff).post("/api/groups/", {"name": name}, format="json")

    assert answer.status_code == 400, answer.content
    [message] = answer.json()["name"]
    assert "looks like the group 'managers'" in message or "exists already" in message
    assert list(Group.objects.values_list("name", flat=True)) == ["managers"]


def test_the_refusal_names_the_group_and_the_letter_that_differs(
    api_for, staff, managers
):
    answer = api_for(staff).post(
        "/api/groups/", {"name": "m\u0430nagers"}, format="json"
    )

    assert answer.json() == {
        "name": [
            "'m\u0430nagers' looks like the group 'managers', which exists already "
            "(U+0430 CYRILLIC SMALL LETTER A): choose a name that reads differently."
        ]
    }


def test_renaming_a_group_to_look_like_another_is_refused(api_for, staff, managers):
    ops = Group.objects.create(name="ops")

    answer = api_for(staff).patch(
        f"/api/groups/{ops.pk}/", {"name": "m\u0430nagers"}, format="json"
    )

    assert answer.status_code == 400
    assert "looks like the group 'managers'" in answer.json()["name"][0]
    ops.refresh_from_db()
    assert ops.name == "ops"


def test_a_group_may_be_renamed_to_a_lookalike_of_its_own_name(
    api_for, staff, managers
):
    answer = api_for(staff).patch(
        f"/api/groups/{managers.pk}/", {"name": "Managers"}, format="json"
    )

    assert answer.status_code == 200
    assert answer.json()["name"] == "Managers"


@pytest.mark.parametrize("name", ["marketing", "résumé", "managers-eu", "team-b"])
def test_names_that_read_differently_are_created(api_for, staff, managers, name):
    Group.objects.create(name="team-a")

    answer = api_for(staff).post("/api/groups/", {"name": name}, format="json")

    assert answer.status_code == 201, answer.content


def test_confusable_with_names_the_existing_group_for_other_callers(managers):
    Group.objects.create(name="ops")

    assert groups.confusable_with("m\u0430nagers") == "managers"
    assert groups.confusable_with("0ps") == "ops"
    assert groups.confusable_with("sales") is None
    assert groups.confusable_with("Managers", other_than=managers) is None


def test_the_admin_refuses_a_lookalike_group_name(admin_client, managers):
    answer = admin_client.post(
        "/admin/auth/group/add/", {"name": "m\u0430nagers", "permissions": []}
    )

    assert answer.status_code == 200  # the form again, with the error
    assert "looks like the group" in answer.content.decode()
    assert Group.objects.count() == 1
