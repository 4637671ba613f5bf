"""Signing in through a real OpenID Connect provider (tests/oidc: the npm package
oidc-provider on 127.0.0.1), without a browser: the code flow, PKCE, the ID token's
checks, and the groups the claim brings. The browser does the same in
tests/browser/test_sign_in.py."""

from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model

from tests.oidc.flow import CALLBACK, sign_in, use_provider
from tests.oidc.provider import Provider, running_provider
from toolsets.models import ProviderIdentity
from toolsets.sso import discovery

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def provider(tmp_path_factory) -> Iterator[Provider]:
    folder = tmp_path_factory.mktemp("oidc")
    with running_provider(redirect_uris=[CALLBACK], folder=folder) as running:
        yield running


@pytest.fixture
def signed_up(provider, settings) -> Provider:
    """Toolcrib set up with the provider (as its environment would), erin known there."""
    use_provider(settings, provider)
    provider.set_account(
        "erin",
        password="erin-pw",
        claims={
            "preferred_username": "erin",
            "email": "erin@example.com",
            "groups": ["support"],
        },
    )
    return provider


def test_discovery_finds_the_providers_endpoints(signed_up):
    found = discovery.endpoints()

    assert found.authorization == f"{signed_up.issuer}/auth"
    assert found.jwks.startswith(signed_up.issuer)


def test_a_first_sign_in_creates_her_with_the_claimed_groups(client, signed_up):
    landed = sign_in(client, signed_up, login="erin", password="erin-pw")

    assert landed.status_code == 302
    assert landed["Location"] == "/inbox/"
    erin = get_user_model().objects.get(username="erin")
    assert client.session["_auth_user_id"] == str(erin.pk)
    assert erin.email == "erin@example.com"
    assert list(erin.groups.values_list("name", flat=True)) == ["support"]
    assert ProviderIdentity.objects.get(user=erin).issuer == signed_up.issuer


def test_her_next_sign_in_brings_her_groups_up_to_date(client, signed_up):
    sign_in(client, signed_up, login="erin", password="erin-pw")
    signed_up.set_account(
        "erin",
        password="erin-pw",
        claims={"preferred_username": "erin", "groups": ["managers"]},
    )
    client.logout()

    sign_in(client, signed_up, login="erin", password="erin-pw")

    erin = get_user_model().objects.get(username="erin")
    assert list(erin.groups.values_list("name", flat=True)) == ["managers"]


def test_a_refused_sign_in_goes_back_to_the_login_page_saying_why(client, signed_up):
    sign_in(client, signed_up, login="erin", password="erin-pw")
    client.logout()
    get_user_model().objects.filter(username="erin").update(is_active=False)

    landed = sign_in(client, signed_up, login="erin", password="erin-pw")

    assert landed["Location"] == "/login/?sso=failed"
    assert "_auth_user_id" not in client.session
    page = client.get(landed["Location"]).content.decode()
    assert "erin is switched off" in page
