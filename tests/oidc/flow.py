"""A provider sign-in driven without a browser: Django's test client plays Toolcrib's
side, an httpx client the person's browser at the provider (tests/oidc/provider.py).
"""

import re
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
from django.core.cache import cache

from tests.oidc.provider import Provider

CALLBACK = "http://testserver/oidc/callback/"
START = "/oidc/authenticate/?next=/inbox/"


def use_provider(settings, provider: Provider) -> Provider:
    """Toolcrib set up with the provider, as its environment would."""
    env = provider.settings_env()
    settings.TOOLCRIB_OIDC_ISSUER = env["TOOLCRIB_OIDC_ISSUER"]
    settings.OIDC_RP_CLIENT_ID = env["TOOLCRIB_OIDC_CLIENT_ID"]
    settings.OIDC_RP_CLIENT_SECRET = env["TOOLCRIB_OIDC_CLIENT_SECRET"]
    settings.OIDC_RP_SCOPES = env["TOOLCRIB_OIDC_SCOPES"]
    settings.TOOLCRIB_OIDC_PROVIDER_NAME = env["TOOLCRIB_OIDC_PROVIDER_NAME"]
    settings.TOOLCRIB_OIDC_MANAGED_GROUPS = ["*"]
    cache.clear()  # the discovery document of an earlier provider
    return provider


def start(client, path: str = START, *, method: str = "get") -> str:
    """Toolcrib's redirect to the provider's authorization endpoint."""
    response = getattr(client, method)(path)
    assert response.status_code == 302, response
    return response["Location"]


def nonce_of(authorization_url: str) -> str:
    """The nonce Toolcrib asked the provider to put in the ID token."""
    return parse_qs(urlsplit(authorization_url).query)["nonce"][0]


def at_provider(provider: Provider, url: str, *, login: str, password: str) -> str:
    """The person signs in at the provider's page; the URL it sends her back to."""
    with httpx.Client(follow_redirects=False, timeout=10) as browser:
        page = _follow(browser, url)
        form = re.search(r'action="([^"]+)"', page.text).group(1)
        answer = browser.post(
            urljoin(provider.issuer, form), data={"login": login, "password": password}
        )
        back = _follow(browser, answer.headers["location"], base=provider.issuer)
    assert back.startswith(CALLBACK), back
    return back


def back_at_toolcrib(client, url: str):
    """Toolcrib's callback, as the browser brings it the provider's answer."""
    parts = urlsplit(url)
    return client.get(f"{parts.path}?{parts.query}")


def sign_in(client, provider: Provider, *, login: str, password: str, path=START):
    """The whole flow, from Toolcrib's sign-in link to its callback's answer."""
    url = start(client, path)
    return back_at_toolcrib(
        client, at_provider(provider, url, login=login, password=password)
    )


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
