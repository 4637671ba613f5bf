"""`/healthz`: each configured part answers, or a 503 says which does not."""

import pytest
from django.db import connection

from tests.live.server import free_port

pytestmark = pytest.mark.django_db


def test_the_defaults_are_healthy_without_signing_in(client):
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    checks = response.json()["checks"]
    assert checks["database"]["status"] == "ok"
    assert checks["database"]["vendor"] == connection.vendor
    assert checks["channel_layer"]["status"] == "ok"
    assert checks["channel_layer"]["backend"] == "InMemoryChannelLayer"
    assert checks["broker"] == {
        "status": "off",
        "executor": "inline",
        "ms": checks["broker"]["ms"],
    }


def test_an_unreachable_channel_layer_is_a_503_that_names_no_address(client, settings):
    port = free_port()
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "project.patches.redis_layer.RedisChannelLayer",
            "CONFIG": {"hosts": [f"redis://127.0.0.1:{port}/0"]},
        }
    }

    response = client.get("/healthz")

    assert response.status_code == 503
    assert response.json()["status"] == "error"
    assert response.json()["checks"]["channel_layer"]["status"] == "error"
    assert response.json()["checks"]["database"]["status"] == "ok"
    assert str(port) not in response.content.decode()
    assert "127.0.0.1" not in response.content.decode()


def test_only_get_is_answered(client):
    assert client.post("/healthz").status_code == 405
