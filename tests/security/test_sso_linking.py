"""A provider account is linked to a Toolcrib user by its issuer and subject only.

The claim `preferred_username` (and `email`) is whatever the provider account says
(OpenID Connect Core §5.7: not unique, not stable): an account there that claims
alice's name and email, or a staff user's name, signs in as a new user and never
as her. An existing account is linked only by its owner, signed in, or by staff.
Against the real test provider (tests/oidc)."""

from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.oidc.flow import (
    CALLBACK,
    at_provider,
    back_at_toolcrib,
    sign_in,
    start,
    use_provider,
)
from tests.oidc.provider import Provider, running_provider
from toolsets.models import ProviderIdentity

pytestmark = pytest.mark.django_db

LINK = "/oidc/link/?next=/tokens/"


@pytest.fixture(scope="module")
def provider(tmp_path_factory) -> Iterator[Provider]:
    folder = tmp_path_factory.mktemp("oidc-linking")
    with running_provider(redirect_uris=[CALLBACK], folder=folder) as running:
        yield running


@pytest.fixture
def sso(provider, settings) -> Provider:
    use_provider(settings, provider)
    settings.TOOLCRIB_OIDC_STAFF_GROUP = "toolcrib-admins"
    provider.set_account(
        "mallory",
        password="mallory-pw",
        claims={"preferred_username": "alice", "email": "alice@example.com"},
    )
    provider.set_account(
        "alice-at-idp",
        password="alice-pw",
        claims={"preferred_username": "alice", "email": "alice@example.com"},
    )
    return provider


def signed_in_user(client):
    return get_user_model().objects.get(pk=client.session["_auth_user_id"])


def test_a_provider_account_claiming_her_name_and_email_signs_in_as_someone_else(
    client, sso, alice, demo_agents, start_session
):
    alice.email = "alice@example.com"
    alice.save()
    session = start_session(alice, "weather_sentiment")

    landed = sign_in(client, sso, login="mallory", password="mallory-pw")

    assert landed.status_code == 302
    newcomer = signed_in_user(client)
    assert newcomer.pk != alice.pk
    assert newcomer.username == "alice-2"
    assert client.get(f"/api/sessions/{session}/").status_code == 404
    assert client.get("/api/sessions/").json()["results"] == []
    assert not ProviderIdentity.objects.filter(user=alice).exists()


def test_a_staff_users_name_with_the_staff_group_gives_no_hold_on_her(
    client, sso, make_user
):
    sam = make_user("sam", is_staff=True)
    sso.set_account(
        "eve",
        password="eve-pw",
        claims={"preferred_username": "sam", "groups": ["toolcrib-admins"]},
    )

    sign_in(client, sso, login="eve", password="eve-pw")

    assert signed_in_user(client).username == "sam-2"
    assert not ProviderIdentity.objects.filter(user=sam).exists()


@pytest.mark.parametrize("claimed", ["Alice", " alice", "ａｌｉｃｅ"])
def test_a_look_alike_of_her_name_is_not_her_name_either(client, sso, alice, claimed):
    sso.set_account(
        "mallory", password="mallory-pw", claims={"preferred_username": claimed}
    )

    sign_in(client, sso, login="mallory", password="mallory-pw")

    assert signed_in_user(client).username.lower() == "alice-2"


def test_a_superusers_name_links_nobody_to_her(client, sso):
    admin = get_user_model().objects.create_superuser("admin", password="pw")
    sso.set_account("eve", password="eve-pw", claims={"preferred_username": "admin"})

    sign_in(client, sso, login="eve", password="eve-pw")

    assert signed_in_user(client).username == "admin-2"
    assert not ProviderIdentity.objects.filter(user=admin).exists()


def test_she_links_her_own_account_signed_in_then_signs_in_with_the_provider(
    client, sso, alice
):
    client.force_login(alice)

    url = start(client, LINK, method="post")
    landed = back_at_toolcrib(
        client, at_provider(sso, url, login="alice-at-idp", password="alice-pw")
    )

    assert "prompt=login" in url  # whoever is signed in at the provider says so
    assert landed["Location"] == "/tokens/"
    identity = ProviderIdentity.objects.get(user=alice)
    assert (identity.subject, identity.linked_by) == ("alice-at-idp", "user")
    client.logout()
    sign_in(client, sso, login="alice-at-idp", password="alice-pw")
    assert signed_in_user(client).pk == alice.pk


def test_linking_needs_her_own_post_with_its_csrf_token(sso, alice):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)

    assert browser.post(LINK).status_code == 403
    assert browser.get(LINK).status_code == 405


def test_linking_needs_someone_signed_in(client, sso):
    answer = client.post(LINK)

    assert answer.status_code == 302
    assert answer["Location"].startswith("/login/")


def test_a_provider_account_linked_to_someone_else_is_not_linked_again(
    client, sso, alice, bob
):
    sign_in(client, sso, login="mallory", password="mallory-pw")  # alice-2
    client.force_login(bob)

    url = start(client, LINK, method="post")
    landed = back_at_toolcrib(
        client, at_provider(sso, url, login="mallory", password="mallory-pw")
    )

    assert landed["Location"] == "/tokens/"  # still bob, back where he asked
    assert not ProviderIdentity.objects.filter(user=bob).exists()
    page = client.get("/tokens/").content.decode()
    assert "linked to another Toolcrib account (alice-2)" in page


def test_a_superuser_cannot_link_herself_to_the_provider(client, sso):
    admin = get_user_model().objects.create_superuser("admin", password="pw")
    client.force_login(admin)

    answer = client.post(LINK, follow=True)

    assert not ProviderIdentity.objects.filter(user=admin).exists()
    assert "superuser" in answer.content.decode()


def test_staff_link_an_existing_account_to_a_provider_subject(
    client, sso, alice, make_user, api_for
):
    staff = make_user("sam", is_staff=True)

    linked = api_for(staff).put(
        "/api/users/alice/identity/", {"subject": "alice-at-idp"}, format="json"
    )
    sign_in(client, sso, login="alice-at-idp", password="alice-pw")

    assert linked.status_code == 200, linked.content
    assert linked.json()["linked_by"] == "staff"
    assert signed_in_user(client).pk == alice.pk


def test_staff_move_a_subject_from_the_user_it_made_to_hers(
    client, sso, alice, make_user, api_for
):
    staff = make_user("sam", is_staff=True)
    sign_in(client, sso, login="alice-at-idp", password="alice-pw")  # alice-2
    client.logout()

    moved = api_for(staff).put(
        "/api/users/alice/identity/", {"subject": "alice-at-idp"}, format="json"
    )
    sign_in(client, sso, login="alice-at-idp", password="alice-pw")

    assert moved.status_code == 200, moved.content
    assert signed_in_user(client).pk == alice.pk
    assert ProviderIdentity.objects.get(subject="alice-at-idp").user == alice


def test_only_staff_link_and_never_to_a_superuser(sso, alice, make_user, api_for):
    staff = make_user("sam", is_staff=True)
    admin = get_user_model().objects.create_superuser("admin", password="pw")
    body = {"subject": "alice-at-idp"}

    by_alice = api_for(alice).put("/api/users/alice/identity/", body, format="json")
    to_admin = api_for(staff).put(
        f"/api/users/{admin.username}/identity/", body, format="json"
    )

    assert by_alice.status_code == 403
    assert to_admin.status_code == 403
    assert "superuser" in to_admin.json()["detail"]
    assert not ProviderIdentity.objects.exists()


def test_staff_unlink_and_the_subject_then_signs_in_as_a_new_user(
    client, sso, alice, make_user, api_for
):
    staff = make_user("sam", is_staff=True)
    api_for(staff).put(
        "/api/users/alice/identity/", {"subject": "alice-at-idp"}, format="json"
    )

    unlinked = api_for(staff).delete("/api/users/alice/identity/")
    sign_in(client, sso, login="alice-at-idp", password="alice-pw")

    assert unlinked.status_code == 204
    assert signed_in_user(client).username == "alice-2"
