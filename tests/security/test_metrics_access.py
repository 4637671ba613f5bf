"""Who may read /metrics: a staff user's token or session, or an allowlisted client
address (REMOTE_ADDR, never a forwarded header); everyone else is refused."""

import ipaddress

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

PRIVATE = [ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("fd00::/8")]


@pytest.fixture
def allow_private(settings):
    settings.TOOLCRIB_METRICS_ALLOW = PRIVATE


def test_anonymous_is_asked_who_they_are(client):
    response = client.get("/metrics")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert b"toolcrib_" not in response.content


def test_a_forged_token_is_401(client):
    response = client.get("/metrics", HTTP_AUTHORIZATION="Token " + "0" * 64)

    assert response.status_code == 401


def test_a_non_staff_token_is_403(alice, api_for):
    response = api_for(alice).get("/metrics")

    assert response.status_code == 403
    assert b"toolcrib_" not in response.content


def test_a_non_staff_session_is_403(alice, client):
    client.force_login(alice)

    assert client.get("/metrics").status_code == 403


def test_a_staff_token_and_a_staff_session_may_scrape(make_user, api_for, client):
    staff = make_user(is_staff=True)
    client.force_login(staff)

    by_token = api_for(staff).get("/metrics")
    by_session = client.get("/metrics")

    assert by_token.status_code == by_session.status_code == 200
    assert b"toolcrib_turns_total" in by_token.content


def test_an_allowlisted_address_may_scrape(allow_private):
    for address in ("10.1.2.3", "fd00::5"):
        response = Client(REMOTE_ADDR=address).get("/metrics")
        assert response.status_code == 200
        assert b"toolcrib_queued_turns" in response.content


def test_a_forged_forwarded_header_does_not_pass_the_allowlist(allow_private):
    client = Client(REMOTE_ADDR="203.0.113.9")

    forwarded = client.get(
        "/metrics",
        HTTP_X_FORWARDED_FOR="10.1.2.3",
        HTTP_X_REAL_IP="10.1.2.3",
        HTTP_FORWARDED="for=10.1.2.3",
    )

    assert forwarded.status_code == 401


def test_an_address_outside_the_allowlist_is_refused(allow_private):
    assert Client(REMOTE_ADDR="192.168.1.1").get("/metrics").status_code == 401


def test_metrics_refuses_writes(make_user, api_for):
    staff = make_user(is_staff=True)

    assert api_for(staff).post("/metrics").status_code == 405
