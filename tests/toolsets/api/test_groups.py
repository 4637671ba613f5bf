"""/api/groups/ and /api/users/: staff manage groups and members by username."""

import pytest
from django.contrib.auth.models import Group

from toolsets.models import ProviderIdentity

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user):
    return make_user("boss", is_staff=True)


@pytest.fixture
def support(alice):
    group = Group.objects.create(name="support")
    group.user_set.add(alice)
    return group


def test_list_groups_with_member_counts(api_for, staff, support):
    Group.objects.create(name="billing")

    answer = api_for(staff).get("/api/groups/")

    assert answer.status_code == 200
    assert [(g["name"], g["member_count"]) for g in answer.json()] == [
        ("billing", 0),
        ("support", 1),
    ]
    assert answer.json()[0]["managed_by_provider"] is False


def test_create_rename_and_delete_a_group(api_for, staff):
    client = api_for(staff)

    created = client.post("/api/groups/", {"name": "  helpdesk "}, format="json")
    assert created.status_code == 201
    group = created.json()
    assert group["name"] == "helpdesk"
    assert group["members"] == []

    renamed = client.patch(
        f"/api/groups/{group['id']}/", {"name": "support desk"}, format="json"
    )
    assert renamed.status_code == 200
    assert Group.objects.get(pk=group["id"]).name == "support desk"

    assert client.delete(f"/api/groups/{group['id']}/").status_code == 204
    assert not Group.objects.filter(pk=group["id"]).exists()
    assert client.get(f"/api/groups/{group['id']}/").status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "Support"}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "x" * 151}, "name"),
        ({"name": "tab\there"}, "name"),
        ({}, "name"),
        ({"name": "ok", "extra": 1}, "extra"),
    ],
)
def test_a_bad_or_taken_name_is_a_400_with_field_errors(
    api_for, staff, support, body, field
):
    answer = api_for(staff).post("/api/groups/", body, format="json")

    assert answer.status_code == 400
    assert field in answer.json()
    assert Group.objects.count() == 1


def test_members_are_added_and_removed_by_username(api_for, staff, support, bob):
    client = api_for(staff)
    members = f"/api/groups/{support.pk}/members/"

    added = client.post(members, {"username": "bob"}, format="json")
    assert added.status_code == 201
    assert [m["username"] for m in added.json()["members"]] == ["alice", "bob"]
    assert client.post(members, {"username": "bob"}, format="json").status_code == 200

    assert client.delete(f"{members}bob/").status_code == 204
    assert list(support.user_set.values_list("username", flat=True)) == ["alice"]
    assert client.delete(f"{members}bob/").status_code == 404


def test_adding_nobody_is_a_400_naming_the_username(api_for, staff, support):
    answer = api_for(staff).post(
        f"/api/groups/{support.pk}/members/", {"username": "nobody"}, format="json"
    )

    assert answer.status_code == 400
    assert "username" in answer.json()


def test_users_with_their_groups_found_by_name(api_for, staff, support, bob):
    ProviderIdentity.objects.create(
        user=bob, issuer="https://id", subject="b", last_sign_in_at="2026-01-01T00:00Z"
    )
    client = api_for(staff)

    found = client.get("/api/users/", {"search": "ali"}).json()
    assert [(u["username"], u["groups"]) for u in found] == [("alice", ["support"])]

    one = client.get("/api/users/bob/").json()
    assert one["groups"] == []
    assert one["single_sign_on"] is True
    assert client.get("/api/users/nobody/").status_code == 404


def test_users_of_one_group_and_a_limit(api_for, staff, support, bob):
    client = api_for(staff)

    assert [u["username"] for u in client.get("/api/users/?group=support").json()] == [
        "alice"
    ]
    assert len(client.get("/api/users/?limit=1").json()) == 1
    assert client.get("/api/users/?limit=0").status_code == 400


def test_a_group_is_provider_managed_when_its_name_matches(
    settings, api_for, staff, support
):
    settings.TOOLCRIB_OIDC_ISSUER = "https://id.example.com"
    settings.TOOLCRIB_OIDC_MANAGED_GROUPS = ["supp*"]

    answer = api_for(staff).get(f"/api/groups/{support.pk}/")

    assert answer.json()["managed_by_provider"] is True
