"""Model grants decide who may use which model: a deny beats any allow, a user's
and her groups' grants alike, the model before its connection in the rule named,
an expired grant as if it did not exist, and the default open unless
TOOLCRIB_MODELS_NEED_GRANT; staff manage them at /api/model-grants/."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from agents import model_grants
from agents.model_grants import explain, grant_model, revoke_grant
from agents.models import Change, ModelGrant

pytestmark = pytest.mark.django_db

GPT = "openai/gpt-4o-mini"


@pytest.fixture(autouse=True)
def fresh():
    model_grants.forget()
    yield
    model_grants.forget()


@pytest.fixture
def interns(alice):
    group = Group.objects.create(name="interns")
    alice.groups.add(group)
    return group


@pytest.fixture
def staff(make_user):
    return make_user("root", is_staff=True)


def test_a_model_no_grant_names_is_open_by_default(alice):
    decision = explain(user_id=alice.pk, model=GPT)

    assert decision.allowed
    assert decision.rule == "models are open to everyone unless a grant denies one"


def test_with_models_needing_a_grant_an_ungranted_model_is_refused(alice, settings):
    settings.TOOLCRIB_MODELS_NEED_GRANT = True

    decision = explain(user_id=alice.pk, model=GPT)

    assert not decision.allowed
    assert decision.refusal(GPT) == (
        f"You may not use the model {GPT}: models need a grant here, and no grant "
        "allows it to you or your groups."
    )


def test_a_group_deny_beats_the_users_own_allow(alice, interns):
    grant_model(model=GPT, effect="allow", user=alice)
    deny, _ = grant_model(model=GPT, effect="deny", group=interns)

    decision = explain(user_id=alice.pk, model=GPT)

    assert not decision.allowed
    assert decision.rule == f"denied by grant #{deny.pk} (group interns on {GPT})"


def test_a_connection_wide_deny_is_not_punched_through_by_a_model_allow(alice):
    grant_model(model=GPT, effect="allow", user=alice)
    deny, _ = grant_model(model="openai/*", effect="deny", user=alice)

    decision = explain(user_id=alice.pk, model=GPT)

    assert not decision.allowed
    assert decision.grant_id == deny.pk
    assert explain(user_id=alice.pk, model="gemini-2.5-flash").allowed


def test_an_allow_names_the_model_before_its_connection_and_the_user_before_a_group(
    alice, interns, settings
):
    settings.TOOLCRIB_MODELS_NEED_GRANT = True
    grant_model(model="openai/*", effect="allow", group=interns)
    by_group, _ = grant_model(model=GPT, effect="allow", group=interns)
    mine, _ = grant_model(model=GPT, effect="allow", user=alice)

    assert explain(user_id=alice.pk, model=GPT).grant_id == mine.pk
    revoke_grant(grant=mine)
    assert explain(user_id=alice.pk, model=GPT).grant_id == by_group.pk
    assert explain(user_id=alice.pk, model="openai/gpt-4o").allowed
    assert not explain(user_id=alice.pk, model="gemini-2.5-flash").allowed


def test_an_expired_grant_is_as_if_it_did_not_exist(alice):
    deny, _ = grant_model(
        model=GPT, effect="deny", user=alice, expires_at=timezone.now()
    )

    assert explain(user_id=alice.pk, model=GPT).allowed


def test_a_grant_expiring_later_holds_until_then(alice):
    soon = timezone.now() + timedelta(hours=1)
    grant_model(model=GPT, effect="deny", user=alice, expires_at=soon)

    assert not explain(user_id=alice.pk, model=GPT).allowed
    ModelGrant.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    # Rows changed by hand reach the decision too: the signal bumps the version.
    model_grants.bump_version()
    assert explain(user_id=alice.pk, model=GPT).allowed


def test_joining_and_leaving_a_group_changes_the_decision_at_once(alice):
    group = Group.objects.create(name="contractors")
    grant_model(model=GPT, effect="deny", group=group)
    assert explain(user_id=alice.pk, model=GPT).allowed

    alice.groups.add(group)
    assert not explain(user_id=alice.pk, model=GPT).allowed

    alice.groups.remove(group)
    assert explain(user_id=alice.pk, model=GPT).allowed


def test_a_decision_costs_one_query_once_the_users_groups_are_read(
    alice, interns, django_assert_num_queries
):
    grant_model(model=GPT, effect="deny", group=interns)
    explain(user_id=alice.pk, model=GPT)

    with django_assert_num_queries(1):
        assert not explain(user_id=alice.pk, model=GPT).allowed


# The API.


def test_staff_create_list_change_and_delete_a_grant(api_for, staff, alice, interns):
    api = api_for(staff)
    later = (timezone.now() + timedelta(days=1)).isoformat()

    created = api.post(
        "/api/model-grants/",
        {"group": "interns", "model": GPT, "effect": "deny", "expires_at": later},
        format="json",
    )
    assert created.status_code == 201, created.content
    grant = created.json()
    assert grant["group"] == "interns" and grant["user"] is None
    assert grant["active"] is True and grant["created_by"] == "root"
    assert not explain(user_id=alice.pk, model=GPT).allowed

    changed = api.patch(
        f"/api/model-grants/{grant['id']}/", {"effect": "allow"}, format="json"
    )
    assert changed.status_code == 200, changed.content
    assert explain(user_id=alice.pk, model=GPT).allowed
    moved = api.patch(
        f"/api/model-grants/{grant['id']}/", {"user": "alice"}, format="json"
    )
    assert moved.json()["user"] == "alice" and moved.json()["group"] is None

    assert [g["id"] for g in api.get("/api/model-grants/").json()] == [grant["id"]]
    assert api.delete(f"/api/model-grants/{grant['id']}/").status_code == 204
    assert not ModelGrant.objects.exists()
    actions = list(
        Change.objects.filter(kind="agents.modelgrant")
        .order_by("id")
        .values_list("action", flat=True)
    )
    assert actions == ["create", "update", "update", "delete"]


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        (
            {"user": "nobody", "model": GPT, "effect": "deny"},
            "user",
            "Object with username=nobody does not exist.",
        ),
        (
            {"group": "ghosts", "model": GPT, "effect": "deny"},
            "group",
            "Object with name=ghosts does not exist.",
        ),
        (
            {"user": "alice", "model": "nolab/llama3", "effect": "deny"},
            "model",
            "No model connection is named nolab. Staff add connections on the Models page.",
        ),
        (
            {"user": "alice", "model": "nolab/*", "effect": "deny"},
            "model",
            "No model connection or provider is named nolab.",
        ),
        (
            {
                "user": "alice",
                "model": GPT,
                "effect": "deny",
                "expires_at": "2001-01-01T00:00:00Z",
            },
            "expires_at",
            "Must be in the future.",
        ),
        (
            {"user": "alice", "model": GPT, "effect": "deny", "expires_at": "soon"},
            "expires_at",
            None,
        ),
        (
            {"user": "alice", "group": "interns", "model": GPT, "effect": "deny"},
            "user",
            "Set either a user or a group, not both.",
        ),
        ({"user": "alice", "model": GPT, "effect": "maybe"}, "effect", None),
    ],
)
def test_bad_input_is_a_400_naming_the_field(
    api_for, staff, alice, interns, body, field, message
):
    response = api_for(staff).post("/api/model-grants/", body, format="json")

    assert response.status_code == 400, response.content
    errors = response.json()[field]
    if message is not None:
        assert errors == [message]


def test_a_second_grant_for_the_same_subject_and_model_is_a_400(api_for, staff, alice):
    grant_model(model=GPT, effect="deny", user=alice)

    response = api_for(staff).post(
        "/api/model-grants/",
        {"user": "alice", "model": GPT, "effect": "allow"},
        format="json",
    )

    assert response.status_code == 400
    assert response.json() == {"model": [f"User alice already has a grant on {GPT}."]}


def test_a_connections_model_and_every_model_of_it_may_be_granted(
    api_for, staff, alice
):
    from agents.connections import save_connection

    save_connection(
        connection=None,
        fields={"name": "lab", "kind": "openai_compatible", "base_url": "http://x/v1"},
        key=None,
    )
    api = api_for(staff)
    for model in ("lab/llama3", "lab/*"):
        response = api.post(
            "/api/model-grants/",
            {"user": "alice", "model": model, "effect": "allow"},
            format="json",
        )
        assert response.status_code == 201, response.content


def test_non_staff_get_403(api_for, alice):
    api = api_for(alice)

    assert api.get("/api/model-grants/").status_code == 403
    response = api.post(
        "/api/model-grants/",
        {"user": "alice", "model": GPT, "effect": "allow"},
        format="json",
    )
    assert response.status_code == 403


def test_a_group_deleted_with_its_deny_no_longer_refuses(alice, interns):
    grant_model(model=GPT, effect="deny", group=interns)
    assert not explain(user_id=alice.pk, model=GPT).allowed

    interns.delete()  # its grants go with it, and the version with them

    assert explain(user_id=alice.pk, model=GPT).allowed
