"""The change audit: who changed which agent, budget, tool or grant, and when."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from agents import changes
from agents.models import Budget, Change
from tests.threads import at_once
from toolsets.catalog import sync_catalog
from toolsets.models import Tool

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(make_user):
    return make_user("admin", is_staff=True)


def _changes(api_for, admin, **query):
    response = api_for(admin).get("/api/changes/", query)
    assert response.status_code == 200, response.content
    return response.json()


def test_a_tool_policy_change_names_who_made_it_and_what_changed(
    api_for, admin, demo_agents
):
    sync_catalog()
    tool = Tool.objects.filter(enabled=True).first()
    response = api_for(admin).patch(
        f"/api/tools/{tool.full_name}/", {"enabled": False}, format="json"
    )
    assert response.status_code == 200, response.content

    [change] = _changes(api_for, admin, kind="toolsets.tool")["results"]
    assert change["actor"] == "admin"
    assert change["action"] == "update"
    assert change["object_id"] == str(tool.pk)
    assert change["changes"] == {"enabled": [True, False]}


def test_a_budget_set_and_removed_over_the_api_is_in_the_audit(api_for, admin, alice):
    client = api_for(admin)
    made = client.post(
        "/api/budgets/", {"user": "alice", "daily_tokens": 1000}, format="json"
    )
    assert made.status_code == 201, made.content
    budget_id = made.json()["id"]
    client.patch(f"/api/budgets/{budget_id}/", {"daily_tokens": 5000}, format="json")
    client.delete(f"/api/budgets/{budget_id}/")

    listed = _changes(api_for, admin, kind="agents.budget", object=str(budget_id))
    actions = [c["action"] for c in listed["results"]]
    assert actions == ["delete", "update", "create"]
    assert listed["results"][1]["changes"] == {"daily_tokens": [1000, 5000]}
    assert listed["results"][2]["changes"]["daily_tokens"] == [None, 1000]


def test_a_save_nobody_made_is_not_a_change(db, alice):
    Budget.objects.create(user=alice, daily_tokens=10)
    assert not Change.objects.exists()


def test_a_secret_shows_that_it_changed_never_what_it_is(admin, alice):
    user_model = get_user_model()
    tracked_before = changes.is_tracked(user_model)  # toolsets' people track it
    changes.track(user_model)
    try:
        with changes.acting_as(admin):
            alice.set_password("correct horse battery staple")
            alice.save()
            alice.first_name = "Alice"
            alice.save()
    finally:
        if not tracked_before:
            changes.untrack(user_model)
    rows = list(Change.objects.filter(kind="auth.user").order_by("id"))
    assert rows[0].changes["password"] == [changes.HIDDEN, changes.HIDDEN]
    assert rows[1].changes == {"first_name": ["", "Alice"]}
    assert "correct horse" not in str([r.changes for r in rows])
    assert alice.password not in str([r.changes for r in rows])


def test_only_staff_read_the_changes(api_for, alice, client):
    assert api_for(alice).get("/api/changes/").status_code == 403
    assert client.get("/api/changes/").status_code in (401, 403)


def test_the_list_pages_by_cursor_and_filters_by_actor(api_for, admin, make_user):
    other = make_user("other", is_staff=True)
    group = Group.objects.create(name="team")
    with changes.acting_as(admin):
        budget = Budget.objects.create(group=group, daily_tokens=1)
        for tokens in range(2, 62):
            budget.daily_tokens = tokens
            budget.save()
    with changes.acting_as(other):
        budget.daily_tokens = 99
        budget.save()

    first = _changes(api_for, admin, actor="admin")
    assert len(first["results"]) == 50 and first["next"]
    second = api_for(admin).get(first["next"]).json()
    ids = [c["id"] for c in first["results"] + second["results"]]
    assert len(ids) == len(set(ids)) == 61
    assert second["next"] is None
    assert {c["actor"] for c in first["results"] + second["results"]} == {"admin"}
    assert _changes(api_for, admin, actor="other")["results"][0]["changes"] == {
        "daily_tokens": [61, 99]
    }


def test_a_bad_cursor_is_a_400_naming_the_field(api_for, admin):
    response = api_for(admin).get("/api/changes/", {"cursor": "not-ours"})
    assert response.status_code == 400
    assert "cursor" in response.json()


@pytest.mark.django_db(transaction=True)
def test_each_thread_records_its_own_actor(make_user):
    people = [make_user(f"staff{i}", is_staff=True) for i in range(8)]
    groups = [Group.objects.create(name=f"g{i}") for i in range(8)]

    def change(i: int) -> None:
        with changes.acting_as(people[i]):
            Budget.objects.create(group=groups[i], daily_tokens=i + 1)

    at_once(change)
    for row in Change.objects.filter(kind="agents.budget"):
        budget = Budget.objects.get(pk=row.object_id)
        assert row.actor_name == f"staff{budget.daily_tokens - 1}"
    assert Change.objects.count() == 8


def test_a_group_deleted_with_its_grants_is_a_change_of_each(api_for, admin, make_user):
    # A grant's name reads its group, which the cascade deletes first: never a 500.
    make_user("alice")
    sync_catalog()
    client = api_for(admin)
    group = client.post("/api/groups/", {"name": "qa"}, format="json").json()
    grant = {"toolset": "sql", "group": "qa", "effect": "allow"}
    assert client.post("/api/grants/", grant, format="json").status_code == 201

    assert client.delete(f"/api/groups/{group['id']}/").status_code == 204

    gone = _changes(api_for, admin, kind="toolsets.grant")["results"]
    assert gone[0]["action"] == "delete" and gone[0]["object_repr"]
    assert (
        _changes(api_for, admin, kind="auth.group")["results"][0]["action"] == "delete"
    )


@pytest.mark.django_db(transaction=True)
def test_saves_are_recorded_while_other_threads_register_the_model_again(make_user):
    # `_tracked` is swapped whole under a lock: a save on one thread reads the old
    # registration or the new one, never a half-made one, and none is lost.
    person = make_user("staff0", is_staff=True)
    groups = [Group.objects.create(name=f"r{i}") for i in range(4)]

    def work(i: int) -> None:
        if i % 2:  # register Budget again, hiding its tokens, then as before
            for _ in range(50):
                changes.track(Budget, exclude_fields=("daily_tokens",))
                changes.track(Budget)
            return
        with changes.acting_as(person):
            budget = Budget.objects.create(group=groups[i // 2], daily_tokens=1)
            for tokens in range(2, 27):
                budget.daily_tokens = tokens
                budget.save()

    try:
        at_once(work)
    finally:
        changes.track(Budget)  # as AgentsConfig.ready() registers it

    rows = Change.objects.filter(kind="agents.budget")
    assert rows.filter(action="create").count() == 4
    assert rows.filter(action="update").count() == 4 * 25
    for row in rows.filter(action="update"):
        before, after = row.changes["daily_tokens"]
        assert (before, after) == (
            changes.HIDDEN,
            changes.HIDDEN,
        ) or after == before + 1
