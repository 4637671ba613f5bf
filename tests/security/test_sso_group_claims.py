"""Group names in the provider's claim that differ only by letter case, spaces or
Unicode form name one group, not look-alikes of it: `Managers`, ` managers ` and
`ｍanagers` (a full-width m) are the group `managers` if it exists, and a claim never
makes a second group that reads like the first (to staff granting tools, or to an
approver reading who asked)."""

import pytest
from django.contrib.auth.models import Group

from toolsets.sso.accounts import group_names, sign_in_with_claims

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def provider(settings):
    settings.TOOLCRIB_OIDC_ISSUER = "https://id.example.com"
    settings.TOOLCRIB_OIDC_MANAGED_GROUPS = ["*"]
    settings.TOOLCRIB_OIDC_STAFF_GROUP = ""


def sign_in(groups: list[str], sub: str = "u-1"):
    return sign_in_with_claims(
        claims={"sub": sub, "preferred_username": sub, "groups": groups}
    )


def test_look_alike_claims_make_one_group_named_as_first_seen():
    user = sign_in(["Sales  Team", " sales team ", "SALES TEAM", "ｓales team"])

    assert list(Group.objects.values_list("name", flat=True)) == ["Sales Team"]
    assert list(user.groups.values_list("name", flat=True)) == ["Sales Team"]


def test_a_look_alike_claim_joins_the_existing_group():
    managers = Group.objects.create(name="managers")

    user = sign_in([" Managers"])

    assert list(Group.objects.values_list("name", flat=True)) == ["managers"]
    assert list(user.groups.all()) == [managers]


def test_a_look_alike_claim_keeps_her_in_the_group_she_is_in():
    user = sign_in(["managers"])

    sign_in(["MANAGERS"])

    assert list(user.groups.values_list("name", flat=True)) == ["managers"]
    assert Group.objects.count() == 1


def test_of_two_look_alike_groups_she_ends_in_the_older_one():
    older = Group.objects.create(name="managers")
    newer = Group.objects.create(name="Managers")  # made before this rule
    user = sign_in(["managers"])
    user.groups.add(newer)

    sign_in(["Managers"])

    assert list(user.groups.all()) == [older]


def test_managed_group_patterns_match_letter_case_aside(settings):
    settings.TOOLCRIB_OIDC_MANAGED_GROUPS = ["corp-*"]

    user = sign_in(["CORP-Support", "managers"])

    assert list(user.groups.values_list("name", flat=True)) == ["CORP-Support"]


def test_group_names_are_cleaned_and_blank_ones_skipped():
    assert group_names({"groups": ["  a\u00a0 b ", " ", "\t", "a b"]}) == ["a b"]


def test_the_staff_group_is_matched_letter_case_aside(settings):
    settings.TOOLCRIB_OIDC_STAFF_GROUP = "toolcrib-admins"

    assert sign_in([" Toolcrib-Admins"]).is_staff


def test_a_claim_in_another_scripts_letters_makes_no_look_alike_group(caplog):
    managers = Group.objects.create(name="managers")

    user = sign_in(["m\u0430nagers", "sales"])  # a Cyrillic а

    assert sorted(Group.objects.values_list("name", flat=True)) == [
        "managers",
        "sales",
    ]
    assert managers not in user.groups.all()  # nor does it join the real one
    assert "looks like the group 'managers'" in caplog.text
