"""`/api/access/?users=` and `/api/grants/?users=&groups=`: what the Access page asks
for a page of users at once, with the same answers as one user at a time."""

import pytest

from tests.toolsets.conftest import tool, toolset
from toolsets import grants
from toolsets.grant_conditions import parse_condition

pytestmark = pytest.mark.django_db


@pytest.fixture
def granted(catalog, alice, bob, make_user, make_group):
    carol = make_user("carol")
    crew = make_group("crew", bob, carol)
    grants.grant_tool(target=tool("rockets.launch_rocket"), effect="deny", user=alice)
    grants.grant_tool(target=toolset("rockets"), effect="deny", group=crew)
    grants.grant_tool(
        target=tool("rockets.read_gauge"),
        effect="allow",
        user=carol,
        condition=parse_condition({"name": {"enum": ["fuel"]}}),
        otherwise="deny",
    )
    return [alice, bob, carol], crew


def test_a_batch_answers_as_each_user_alone(granted, staff, api_for):
    users, _ = granted
    client = api_for(staff)
    ids = [users[2].pk, users[0].pk, users[1].pk]

    response = client.get("/api/access/", {"users": ",".join(map(str, ids))})

    assert response.status_code == 200
    one_by_one = [client.get("/api/access/", {"user": pk}).json() for pk in ids]
    assert response.json() == one_by_one
    assert [m["user"]["username"] for m in response.json()] == ["carol", "alice", "bob"]
    bob = response.json()[2]
    rockets = next(row for row in bob["toolsets"] if row["name"] == "rockets")
    assert rockets["allowed"] is False and rockets["reason"] == "deny"


def test_a_repeated_id_is_answered_once(granted, staff, api_for):
    alice = granted[0][0]

    response = api_for(staff).get(f"/api/access/?users={alice.pk},{alice.pk}")

    assert [m["user"]["id"] for m in response.json()] == [alice.pk]


def test_a_user_reads_only_her_own_access_in_a_batch(granted, api_for):
    alice, bob, _ = granted[0]
    client = api_for(alice)

    assert client.get(f"/api/access/?users={alice.pk}").status_code == 200
    assert client.get(f"/api/access/?users={alice.pk},{bob.pk}").status_code == 403
    assert client.get(f"/api/access/?users={bob.pk}").status_code == 403


@pytest.mark.parametrize(
    "value", ["", "abc", "1,", ",1", "-1", "1;2", "²", "0", "99999999999999999999"]
)
def test_bad_ids_are_400(granted, staff, api_for, value):
    response = api_for(staff).get("/api/access/", {"users": value})

    assert response.status_code == 400
    assert "users" in response.json()


def test_an_unknown_user_is_400(granted, staff, api_for):
    alice = granted[0][0]

    response = api_for(staff).get(f"/api/access/?users={alice.pk},99999")

    assert response.status_code == 400
    assert "99999" in str(response.json()["users"])


def test_too_many_ids_are_400(granted, staff, api_for):
    ids = ",".join(str(n) for n in range(1, 102))

    assert api_for(staff).get(f"/api/access/?users={ids}").status_code == 400


def test_user_and_users_together_are_400(granted, staff, api_for):
    alice = granted[0][0]

    response = api_for(staff).get(f"/api/access/?user={alice.pk}&users={alice.pk}")

    assert response.status_code == 400


def test_grants_filtered_to_the_subjects_shown(granted, staff, api_for):
    (alice, bob, carol), crew = granted
    client = api_for(staff)

    def subjects(**query):
        response = client.get("/api/grants/", query)
        assert response.status_code == 200
        return sorted((g["user"] or "", g["group"] or "") for g in response.json())

    assert subjects(users=f"{alice.pk},{bob.pk}") == [("alice", "")]
    assert subjects(groups=str(crew.pk)) == [("", "crew")]
    assert subjects(users=str(carol.pk), groups=str(crew.pk)) == [
        ("", "crew"),
        ("carol", ""),
    ]
    assert len(subjects()) == 3  # no filter: every grant


@pytest.mark.parametrize("query", ["users=x", "groups=1,,2", "users="])
def test_bad_grant_subjects_are_400(granted, staff, api_for, query):
    assert api_for(staff).get(f"/api/grants/?{query}").status_code == 400


def test_only_staff_list_grants_by_subject(granted, api_for):
    alice = granted[0][0]

    assert api_for(alice).get(f"/api/grants/?users={alice.pk}").status_code == 403
