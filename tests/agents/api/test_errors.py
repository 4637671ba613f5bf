"""Django's own error answers are JSON under /api/, as every other API answer."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def failing(settings, client):
    settings.ROOT_URLCONF = "tests.agents.api.failing_urls"
    client.raise_request_exception = False
    return client


def test_a_server_error_under_the_api_is_json(failing):
    answer = failing.get("/api/fails/")

    assert answer.status_code == 500
    assert answer["Content-Type"] == "application/json"
    assert answer.json() == {"detail": "Server error."}


def test_a_permission_denied_outside_drf_is_json_under_the_api(failing):
    answer = failing.get("/api/refuses/")

    assert answer.status_code == 403
    assert answer.json() == {"detail": "Forbidden."}


def test_a_server_error_elsewhere_is_the_usual_page(failing):
    answer = failing.get("/fails/")

    assert answer.status_code == 500
    assert answer["Content-Type"].startswith("text/html")
