"""Secrets leave through no outlet: one redaction rule for every place a value goes.

Issue: a `db_password` nested in `user:preferences` was redacted by the state API
but shown in the `toolcrib.model.instruction` span attribute (ADK renders the
dict into the instruction, where only top-level values were looked at), in the
trace API and the OTLP export; a tool argument named `password` was redacted in
the audit but shown in the `function_call` event over REST and the socket.

One turn of tests.agents.secret_agents' vault keeper plants three secrets (a
nested state value, a call's `password` argument, a result's `session_token`);
none of them may then be read back from the socket, the REST events, the event
inspector, the state API, the trace API, the stored spans, the audit (API, CSV,
JSON lines) or the logs. The OTLP export is tested against a real receiver in
tests/agents/observability/test_otlp_export.py.
"""

import json
import logging

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from agents.models import RunSpan
from agents.tokens import issue_token
from project.asgi import application
from tests.agents.secret_agents import SECRETS

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
REDACTED = "[redacted]"


@pytest.fixture
def vault_session(vault_keeper, alice, start_session) -> str:
    return start_session(alice, vault_keeper)


async def turn_over_the_socket(user, session: str) -> tuple[str, list[dict]]:
    """Say something on the session's socket; the run's id and every frame the
    socket got until the run finished."""
    token = await sync_to_async(issue_token)(user=user)
    socket = WebsocketCommunicator(
        application,
        f"/ws/sessions/{session}/",
        headers=[(b"authorization", f"Token {token}".encode())],
    )
    connected, _ = await socket.connect(timeout=TIMEOUT)
    assert connected
    await socket.send_json_to({"type": "message", "text": "keep and sign me in"})
    run_id, frames = None, []
    while not frames or frames[-1].get("event", {}).get("kind") != "run_finished":
        frame = await socket.receive_json_from(timeout=TIMEOUT)
        if frame["type"] == "ack":
            run_id = frame["run"]["id"]
        frames.append(frame)
    await socket.disconnect()
    return run_id, frames


def read_back(client, session: str, run_id: str) -> dict[str, object]:
    """What a client can read of the session and its turn, outlet by outlet."""

    def ok(path: str):
        response = client.get(path)
        assert response.status_code == 200, response.content
        return response

    events = ok(f"/api/sessions/{session}/events/").json()
    return {
        "REST events": events,
        "event inspector": [
            ok(f"/api/sessions/{session}/events/{frame['seq']}/inspect/").json()
            for frame in events
        ],
        "state API": ok(f"/api/sessions/{session}/state/").json(),
        "trace API": ok(f"/api/runs/{run_id}/trace/").json(),
        "stored spans": list(
            RunSpan.objects.filter(run_id=run_id).values_list("attributes", flat=True)
        ),
        "audit API": ok("/api/tool-calls/").json(),
        "audit CSV": ok("/api/tool-calls/?format=csv").getvalue().decode(),
        "audit JSON lines": ok("/api/tool-calls/?format=jsonl").getvalue().decode(),
    }


def leaks(value: object) -> list[str]:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return [secret for secret in SECRETS if secret in text]


async def test_a_planted_secret_leaves_through_no_outlet(
    alice, vault_session, api_for, caplog
):
    caplog.set_level(logging.DEBUG)

    run_id, frames = await turn_over_the_socket(alice, vault_session)
    outlets = await sync_to_async(read_back)(api_for(alice), vault_session, run_id)
    outlets["socket"] = frames
    outlets["logs"] = caplog.text

    assert {name: leaks(value) for name, value in outlets.items()} == {
        name: [] for name in outlets
    }
    # Each secret was there to leak, and shows as redacted where it was.
    state = outlets["state API"]["user"]["preferences"]
    assert state["database"]["db_password"] == REDACTED
    (call,) = [
        frame["event"]["function_calls"][0]
        for frame in frames
        if frame.get("event", {}).get("kind") == "function_call"
        and frame["event"]["function_calls"][0]["name"] == "sign_in"
    ]
    assert call["args"] == {"username": "ada", "password": REDACTED}
    instructions = [
        span["attributes"].get("toolcrib.model.instruction", "")
        for span in outlets["trace API"]["spans"]
    ]
    assert any("'db_password': '[redacted]'" in text for text in instructions)
    assert "sign_in called with" in outlets["logs"]
