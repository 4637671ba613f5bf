"""A provider sign-in's claims: who she is in Toolcrib, and her groups (the sync rules)."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from toolsets import access, grants
from toolsets.models import ProviderIdentity, Tool, Toolset
from toolsets.sso.accounts import SignInRefused, group_names, sign_in_with_claims

pytestmark = pytest.mark.django_db

ISSUER = "https://id.example.com"


@pytest.fixture(autouse=True)
def provider(settings):
    settings.TOOLCRIB_OIDC_ISSUER = ISSUER
    settings.TOOLCRIB_OIDC_USERNAME_CLAIM = "preferred_username"
    settings.TOOLCRIB_OIDC_GROUPS_CLAIM = "groups"
    settings.TOOLCRIB_OIDC_MANAGED_GROUPS = ["*"]
    settings.TOOLCRIB_OIDC_STAFF_GROUP = ""
    return settings


def claims(sub="u-1", username="carol", groups=(), **more) -> dict:
    return {"sub": sub, "preferred_username": username, "groups": list(groups), **more}


def groups_of(user) -> set[str]:
    return set(user.groups.values_list("name", flat=True))


def test_first_sign_in_creates_the_user_without_a_password():
    user = sign_in_with_claims(
        claims=claims(email="carol@example.com", given_name="Carol", groups=["support"])
    )

    assert user.username == "carol"
    assert user.email == "carol@example.com"
    assert user.first_name == "Carol"
    assert not user.has_usable_password()
    assert groups_of(user) == {"support"}
    assert ProviderIdentity.objects.get(user=user).subject == "u-1"


def test_groups_follow_the_claim_at_every_sign_in_added_and_removed():
    user = sign_in_with_claims(claims=claims(groups=["support", "sales"]))

    sign_in_with_claims(claims=claims(groups=["support", "managers"]))

    assert groups_of(user) == {"support", "managers"}
    sign_in_with_claims(claims=claims(groups=[]))
    assert groups_of(user) == set()


def test_groups_the_provider_does_not_manage_are_never_touched(provider, make_user):
    provider.TOOLCRIB_OIDC_MANAGED_GROUPS = ["corp-*"]
    local = Group.objects.create(name="local-team")
    user = sign_in_with_claims(claims=claims(groups=["corp-support"]))
    user.groups.add(local)  # staff put her in a group of Toolcrib's own

    sign_in_with_claims(claims=claims(groups=["corp-sales", "managers"]))

    # managers is not the provider's to give: ignored, and never created.
    assert groups_of(user) == {"local-team", "corp-sales"}
    assert not Group.objects.filter(name="managers").exists()


def test_the_subject_keeps_her_account_when_the_provider_renames_her():
    user = sign_in_with_claims(claims=claims(username="carol"))

    again = sign_in_with_claims(claims=claims(username="caroline"))

    assert again.pk == user.pk
    assert again.username == "carol"


def test_an_existing_account_of_the_same_name_is_never_linked(make_user):
    dave = make_user("dave")

    newcomer = sign_in_with_claims(claims=claims(sub="d-1", username="dave"))

    assert newcomer.pk != dave.pk
    assert newcomer.username == "dave-2"
    assert not ProviderIdentity.objects.filter(user=dave).exists()
    assert ProviderIdentity.objects.get(user=newcomer).linked_by == "created"


def test_a_new_users_name_takes_the_next_free_number(make_user):
    make_user("dave")
    make_user("Dave-2")

    assert sign_in_with_claims(claims=claims(username="dave")).username == "dave-3"


def test_a_claimed_name_is_made_a_username(make_user):
    user = sign_in_with_claims(claims=claims(username=" Dave Smith/ops "))

    assert user.username == "Dave-Smith-ops"


def test_a_superuser_is_never_linked_by_name():
    admin = get_user_model().objects.create_superuser("admin", password="admin")

    user = sign_in_with_claims(claims=claims(username="admin", groups=["managers"]))

    assert user.username == "admin-2"
    assert not ProviderIdentity.objects.filter(user=admin).exists()


def test_a_subject_linked_to_a_user_later_made_superuser_is_refused():
    user = sign_in_with_claims(claims=claims())
    user.is_superuser = True
    user.save()

    with pytest.raises(SignInRefused):
        sign_in_with_claims(claims=claims())


def test_an_inactive_account_is_refused():
    user = sign_in_with_claims(claims=claims())
    user.is_active = False
    user.save()

    with pytest.raises(SignInRefused):
        sign_in_with_claims(claims=claims())


def test_claims_without_a_subject_or_username_are_refused():
    with pytest.raises(SignInRefused):
        sign_in_with_claims(claims={"preferred_username": "x"})
    with pytest.raises(SignInRefused):
        sign_in_with_claims(claims={"sub": "s"})
    assert not get_user_model().objects.exists()


def test_staff_status_follows_the_staff_group_when_one_is_set(provider):
    provider.TOOLCRIB_OIDC_STAFF_GROUP = "toolcrib-admins"

    user = sign_in_with_claims(claims=claims(groups=["toolcrib-admins"]))
    assert user.is_staff
    user = sign_in_with_claims(claims=claims(groups=["support"]))
    assert not user.is_staff


def test_staff_status_is_never_touched_without_a_staff_group():
    user = sign_in_with_claims(claims=claims())
    user.is_staff = True
    user.save()

    assert sign_in_with_claims(claims=claims()).is_staff


def test_group_claim_as_one_name_or_with_junk():
    assert group_names({"groups": "support"}) == ["support"]
    assert group_names({"groups": ["a", 3, None, "", "x" * 151, "b"]}) == ["a", "b"]
    assert group_names({"groups": {"a": 1}}) == []
    assert group_names({}) == []


def test_a_grant_to_a_claimed_group_reaches_her():
    toolset = Toolset.objects.create(name="ts", default_policy="granted_only")
    Tool.objects.create(toolset=toolset, name="t", full_name="ts.t")
    support = Group.objects.create(name="support")
    grants.grant_tool(target=toolset, effect="allow", group=support)

    user = sign_in_with_claims(claims=claims(groups=["support"]))
    assert access.is_allowed(user_id=user.pk, tool="ts.t")

    sign_in_with_claims(claims=claims(groups=[]))
    assert not access.is_allowed(user_id=user.pk, tool="ts.t")
