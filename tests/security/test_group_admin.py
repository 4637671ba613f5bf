"""Only staff manage groups: a user cannot make a group, or put herself in `managers`.

Group membership decides tool access and who approves (the reimbursement demo's
managers approve large claims), so a self-service way into a group is a way around
both.
"""

import pytest
from django.contrib.auth.models import Group

pytestmark = pytest.mark.django_db


@pytest.fixture
def managers(make_user):
    group = Group.objects.create(name="managers")
    group.user_set.add(make_user("boss"))
    return group


def test_a_user_cannot_create_a_group(api_for, alice, managers):
    answer = api_for(alice).post("/api/groups/", {"name": "mine"}, format="json")

    assert answer.status_code == 403
    assert list(Group.objects.values_list("name", flat=True)) == ["managers"]


def test_a_user_cannot_add_herself_to_managers(api_for, alice, managers):
    answer = api_for(alice).post(
        f"/api/groups/{managers.pk}/members/", {"username": "alice"}, format="json"
    )

    assert answer.status_code == 403
    assert not alice.groups.exists()


def test_a_user_cannot_rename_delete_or_empty_a_group(api_for, alice, managers):
    client = api_for(alice)
    path = f"/api/groups/{managers.pk}/"

    assert client.patch(path, {"name": "x"}, format="json").status_code == 403
    assert client.delete(path).status_code == 403
    assert client.delete(f"{path}members/boss/").status_code == 403

    managers.refresh_from_db()
    assert managers.name == "managers"
    assert list(managers.user_set.values_list("username", flat=True)) == ["boss"]


@pytest.mark.parametrize(
    "path", ["/api/groups/", "/api/users/", "/api/users/alice/", "/api/groups/1/"]
)
def test_a_user_reads_no_groups_or_users(api_for, alice, managers, path):
    assert api_for(alice).get(path).status_code == 403


def test_nobody_signed_out_reaches_groups(client, managers):
    assert client.get("/api/groups/").status_code in {401, 403}
    assert client.post(
        f"/api/groups/{managers.pk}/members/",
        {"username": "alice"},
        content_type="application/json",
    ).status_code in {401, 403}
