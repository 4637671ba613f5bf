"""With TOOLCRIB_PASSWORD_LOGIN off, no password signs anyone in: not the form, not
the API's token endpoint, not the admin's form; only the provider does."""

import pytest

pytestmark = pytest.mark.django_db

PASSWORD_BACKEND = "django.contrib.auth.backends.ModelBackend"


@pytest.fixture
def passwords_off(settings):
    settings.TOOLCRIB_OIDC_ISSUER = "https://id.example.com"
    settings.TOOLCRIB_OIDC_PROVIDER_NAME = "Example ID"
    settings.TOOLCRIB_PASSWORD_LOGIN = False
    # What project/settings.py does when the variable is off.
    settings.AUTHENTICATION_BACKENDS = [
        path for path in settings.AUTHENTICATION_BACKENDS if path != PASSWORD_BACKEND
    ]
    return settings


@pytest.fixture
def admin(make_user):
    user = make_user("root", is_staff=True, password="right")
    user.is_superuser = True
    user.save()
    return user


def test_the_login_form_refuses_the_right_password(client, admin, passwords_off):
    answer = client.post("/login/", {"username": "root", "password": "right"})

    assert answer.status_code == 403
    assert "sign in with Example ID" in answer.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_token_endpoint_refuses_the_right_password(client, admin, passwords_off):
    answer = client.post(
        "/api/auth/token/",
        {"username": "root", "password": "right"},
        content_type="application/json",
    )

    assert answer.status_code == 403
    assert "Example ID" in answer.json()["detail"]


def test_the_admin_form_refuses_the_right_password(client, admin, passwords_off):
    client.post("/admin/login/", {"username": "root", "password": "right"})

    assert "_auth_user_id" not in client.session


def test_a_session_signed_in_with_a_password_ends(client, admin, settings):
    client.post("/login/", {"username": "root", "password": "right"})
    assert client.get("/staff/groups/").status_code == 200

    settings.AUTHENTICATION_BACKENDS = [
        path for path in settings.AUTHENTICATION_BACKENDS if path != PASSWORD_BACKEND
    ]

    assert client.get("/staff/groups/").status_code == 302


def test_with_a_provider_set_up_passwords_still_lock_out(client, settings, make_user):
    settings.TOOLCRIB_OIDC_ISSUER = "https://id.example.com"
    settings.AXES_FAILURE_LIMIT = 2
    make_user("carol", password="right")

    for _ in range(2):
        client.post("/login/", {"username": "carol", "password": "wrong"})
    answer = client.post("/login/", {"username": "carol", "password": "right"})

    assert answer.status_code == 429
