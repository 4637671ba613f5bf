import pytest

from agents.adk.builder import sync_code_agents


@pytest.fixture
def demo_agents(db):
    """The code agents of settings.TOOLCRIB_AGENTS, as rows."""
    return {spec.name: spec for spec in sync_code_agents()}


@pytest.fixture
def start_session(api_for):
    def start(user, agent: str) -> str:
        response = api_for(user).post("/api/sessions/", {"agent": agent}, format="json")
        assert response.status_code == 201, response.content
        return response.json()["id"]

    return start


@pytest.fixture
def say(api_for):
    """Send a message and wait for the turn to end; return the finished run."""

    def send(user, session_id: str, text: str) -> dict:
        response = api_for(user).post(
            f"/api/sessions/{session_id}/messages/?wait=1",
            {"text": text},
            format="json",
        )
        assert response.status_code == 200, response.content
        return response.json()

    return send


@pytest.fixture
def events_of(api_for):
    def read(user, session_id: str, after: int = 0) -> list[dict]:
        response = api_for(user).get(
            f"/api/sessions/{session_id}/events/?after={after}"
        )
        assert response.status_code == 200, response.content
        return response.json()

    return read
