"""The login page: a password form, and "Sign in with <provider>" once one is set up."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def provider(settings):
    settings.TOOLCRIB_OIDC_ISSUER = "https://id.example.com"
    settings.TOOLCRIB_OIDC_PROVIDER_NAME = "Example ID"
    return settings


def test_without_a_provider_only_the_password_form(client):
    page = client.get("/login/").content.decode()

    assert 'name="password"' in page
    assert "Sign in with" not in page


def test_with_a_provider_a_button_beside_the_password_form(client, provider):
    page = client.get("/login/?next=/inbox/").content.decode()

    assert 'href="/oidc/authenticate/?next=/inbox/"' in page
    assert "Sign in with Example ID" in page
    assert 'name="password"' in page


def test_with_passwords_off_the_page_offers_only_the_provider(client, provider):
    provider.TOOLCRIB_PASSWORD_LOGIN = False

    page = client.get("/login/").content.decode()

    assert "Sign in with Example ID" in page
    assert 'name="password"' not in page


def test_a_failed_provider_sign_in_says_so(client, provider):
    page = client.get("/login/?sso=failed").content.decode()

    assert "Signing in with Example ID failed" in page


def test_the_provider_pages_are_not_there_without_a_provider(client):
    assert client.get("/oidc/authenticate/").status_code == 404
    assert client.get("/oidc/callback/?code=x&state=y").status_code == 404
