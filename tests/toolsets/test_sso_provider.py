"""Signing in through a real OpenID Connect provider (tests/oidc: the npm package
oidc-provider on 127.0.0.1), without a browser: the code flow, PKCE, the ID token's
checks, and the groups the claim brings. The browser does the same in
tests/browser/test_sign_in.py."""

import re
from collections.abc import Iterator
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache

from tests.oidc.provider import Provider, running_provider
from toolsets.models import ProviderIdentity
from toolsets.sso import discovery

pytestmark = pytest.mark.django_db

CALLBACK = "http://testserver/oidc/callback/"


@pytest.fixture(scope="module")
def provider(tmp_path_factory) -> Iterator[Provider]:
    folder = tmp_path_factory.mktemp("oidc")
    with running_provider(redirect_uris=[CALLBACK], folder=folder) as running:
        yield running


@pytest.fixture
def signed_up(provider, settings) -> Provider:
    """Toolcrib set up with the provider (as its environment would), erin known there."""
    env = provider.settings_env()
    settings.TOOLCRIB_OIDC_ISSUER = env["TOOLCRIB_OIDC_ISSUER"]
    settings.OIDC_RP_CLIENT_ID = env["TOOLCRIB_OIDC_CLIENT_ID"]
    settings.OIDC_RP_CLIENT_SECRET = env["TOOLCRIB_OIDC_CLIENT_SECRET"]
    settings.OIDC_RP_SCOPES = env["TOOLCRIB_OIDC_SCOPES"]
    settings.TOOLCRIB_OIDC_PROVIDER_NAME = env["TOOLCRIB_OIDC_PROVIDER_NAME"]
    settings.TOOLCRIB_OIDC_MANAGED_GROUPS = ["*"]
    cache.clear()  # the discovery document of an earlier provider
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


def sign_in(client, provider: Provider, *, login: str, password: str):
    """Toolcrib's client and a browser-like client of the provider, through the flow."""
    start = client.get("/oidc/authenticate/?next=/inbox/")
    assert start.status_code == 302
    with httpx.Client(follow_redirects=False, timeout=10) as browser:
        page = _follow(browser, start["Location"])
        form = re.search(r'action="([^"]+)"', page.text).group(1)
        answer = browser.post(
            urljoin(provider.issuer, form), data={"login": login, "password": password}
        )
        back = _follow(browser, answer.headers["location"], base=provider.issuer)
    assert back.startswith(CALLBACK), back
    parts = urlsplit(back)
    return client.get(f"{parts.path}?{parts.query}")


def _follow(browser: httpx.Client, url: str, base: str = ""):
    """Follow the provider's redirects; the page it stops on, or the URL back to us."""
    for _ in range(10):
        url = urljoin(base, url)
        if url.startswith("http://testserver/"):
            return url
        response = browser.get(url)
        if not response.is_redirect:
            return response
        base, url = url, response.headers["location"]
    raise AssertionError("too many redirects")


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


def test_a_refused_sign_in_goes_back_to_the_login_page_saying_why(
    client, signed_up, make_user
):
    admin = make_user("erin")
    admin.is_superuser = True
    admin.save()

    landed = sign_in(client, signed_up, login="erin", password="erin-pw")

    assert landed["Location"] == "/login/?sso=failed"
    assert "_auth_user_id" not in client.session
    page = client.get(landed["Location"]).content.decode()
    assert "is a superuser" in page
