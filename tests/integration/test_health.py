"""`/healthz` on the production path: every part answers, or a 503 says which not."""

import httpx
import pytest

pytestmark = pytest.mark.integration


def assert_no_secrets(text: str, env: dict[str, str]) -> None:
    for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "SECRET_KEY"):
        assert env[name] not in text
    assert "127.0.0.1" not in text


def test_healthz_reports_the_database_layer_and_broker(cluster):
    response = httpx.get(f"{cluster.webs[0].url}/healthz")

    checks = response.json()["checks"]
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert (checks["database"]["status"], checks["database"]["vendor"]) == (
        "ok",
        "postgresql",
    )
    assert (checks["channel_layer"]["status"], checks["channel_layer"]["backend"]) == (
        "ok",
        "RedisChannelLayer",
    )
    assert (checks["broker"]["status"], checks["broker"]["transport"]) == (
        "ok",
        "redis",
    )
    assert_no_secrets(response.text, cluster.env)


def test_healthz_is_503_when_the_broker_does_not_answer(
    web_without_broker, integration_env
):
    response = httpx.get(f"{web_without_broker.url}/healthz", timeout=10)

    checks = response.json()["checks"]
    assert response.status_code == 503
    assert response.json()["status"] == "error"
    assert checks["database"]["status"] == checks["channel_layer"]["status"] == "ok"
    assert checks["broker"]["status"] == "error"
    assert_no_secrets(response.text, integration_env)
