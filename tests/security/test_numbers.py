"""Numbers JSON cannot carry back are refused at every edge, never a 500.

The attackers' finding: `POST /api/tools/{name}/invoke/` with `1e400` (Python reads
it as infinity, which no JSON encoder, jsonb nor SQLite's JSON takes) or an integer
of 4,301 digits (past Python's limit, so reading it raises) answered a 500 HTML page.
Every operation taking JSON now answers 400 with a JSON `detail`, and the socket an
error frame with the socket kept open.
"""

import json
import re

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from agents.artifacts import upload_artifact
from agents.models import Budget, Request, Run
from agents.sessions import create_session
from agents.tokens import issue_token
from project.asgi import application
from toolsets.catalog import sync_catalog
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
BAD_NUMBERS = {
    "1e400": "1e400",
    "-1e400": "-1e400",
    "4,301 digits": "9" * 4301,
    "-4,301 digits": "-" + "9" * 4301,
}
SCHEMA = SchemaGenerator().get_schema(request=None, public=True)


@pytest.fixture
def staff(make_user):
    return make_user("root", is_staff=True)


@pytest.fixture
def rows(staff, demo_agents) -> dict[str, str]:
    """Path parameters naming rows staff may change, by name in the schema."""
    sync_catalog()
    session = create_session(user=staff, agent=demo_agents["calculator"])
    run = Run.objects.create(session=session, user=staff, text="hi")
    upload_artifact(
        session=session, filename="notes.txt", content=b"hi", mime_type="text/plain"
    )
    request = Request.objects.create(session=session, kind="call", call_id="adk-1")
    budget = Budget.objects.create(user=staff, daily_tokens=1000)
    return {
        "session": str(session.id),
        "run": str(run.id),
        "request": str(request.pk),
        "budget": str(budget.pk),
        "agent": "calculator",
        "toolset": "math",
        "tool": "math.calculate",
    }


def path_of(template: str, rows: dict[str, str]) -> str:
    """A schema path with its parameters pointing at existing rows where they can."""
    first = template.split("/")[2]
    own_id = {
        "sessions": rows["session"],
        "runs": rows["run"],
        "requests": rows["request"],
        "budgets": rows["budget"],
    }.get(first, "1")
    path = (
        template.replace("{id}", own_id)
        .replace("{full_name}", rows["tool"])
        .replace("{filename}", "notes.txt")
        .replace("{username}", "root")
        .replace("{name}", rows["agent"] if first == "agents" else rows["toolset"])
    )
    # Any other id (a provider's model_id): a number, the body read before the row.
    return re.sub(r"\{[a-z_]*id\}", "1", path)


def json_operations() -> list[tuple[str, str]]:
    return [
        (method.upper(), path)
        for path, item in SCHEMA["paths"].items()
        for method, operation in item.items()
        if "application/json" in (operation.get("requestBody") or {}).get("content", {})
    ]


def send_raw(client: APIClient, method: str, path: str, body: str):
    return client.generic(method, path, body, content_type="application/json")


@pytest.mark.parametrize("number", BAD_NUMBERS.values(), ids=BAD_NUMBERS)
def test_invoking_a_tool_with_a_number_out_of_range_is_a_400(
    staff, rows, api_for, number
):
    answer = send_raw(
        api_for(staff),
        "POST",
        "/api/tools/math.calculate/invoke/",
        '{"args": {"expression": ' + number + "}}",
    )

    assert answer.status_code == 400, answer.content[:300]
    assert answer["Content-Type"] == "application/json"
    assert "out of range" in answer.json()["detail"]
    assert not ToolCall.objects.exists()


@pytest.mark.parametrize("number", BAD_NUMBERS.values(), ids=BAD_NUMBERS)
def test_every_json_operation_answers_a_number_out_of_range_with_400(
    staff, rows, api_for, number
):
    client = api_for(staff)
    client.raise_request_exception = False
    operations = json_operations()
    body = '{"name": "x", "nested": [{"n": ' + number + "}]}"

    answers = {
        (method, path): send_raw(client, method, path_of(path, rows), body)
        for method, path in operations
    }
    anonymous = send_raw(APIClient(), "POST", "/api/auth/token/", body)

    assert len(operations) >= 30
    assert {op: a.status_code for op, a in answers.items()} == {
        op: 400 for op in operations
    }
    assert all("out of range" in a.json()["detail"] for a in answers.values())
    assert anonymous.status_code == 400
    assert "out of range" in anonymous.json()["detail"]


def test_a_long_integer_within_pythons_limit_is_still_read(staff, rows, api_for):
    answer = send_raw(
        api_for(staff),
        "POST",
        "/api/tools/math.calculate/invoke/",
        '{"args": {"expression": ' + "9" * 4300 + "}}",
    )

    # Read, then refused by the tool's own schema (a string is wanted): a 400
    # naming the argument, not the JSON.
    assert answer.status_code == 400, answer.content[:300]
    assert "detail" not in answer.json()


async def refused_and_still_open(socket: WebsocketCommunicator, raw: str) -> dict:
    await socket.send_to(text_data=raw)
    error = await socket.receive_json_from(timeout=TIMEOUT)
    await socket.send_json_to({"type": "ping"})
    assert await socket.receive_json_from(timeout=TIMEOUT) == {"type": "pong"}
    return error


@pytest.mark.parametrize("number", BAD_NUMBERS.values(), ids=BAD_NUMBERS)
async def test_a_frame_with_a_number_out_of_range_gets_bad_json_and_stays_open(
    staff, rows, number
):
    token = await sync(issue_token)(user=staff)
    socket = WebsocketCommunicator(
        application,
        f"/ws/sessions/{rows['session']}/",
        headers=[(b"authorization", f"Token {token}".encode())],
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]
    backlog = await socket.receive_json_from(timeout=TIMEOUT)  # the uploaded file
    assert backlog["event"]["kind"] == "artifact"
    frame = (
        '{"type": "function_response", "call_id": "adk-1", "ref": "r1", '
        '"response": {"n": ' + number + "}}"
    )

    error = await refused_and_still_open(socket, frame)

    assert error["type"] == "error"
    assert error["error"]["code"] == "bad_json"
    assert "out of range" in error["error"]["message"]
    assert error["ref"] == "r1"
    assert await sync(Run.objects.count)() == 1
    await socket.disconnect()


def test_a_stored_json_field_refuses_an_infinity_parsed_elsewhere():
    from agents.inputs import BadJson, check_json

    with pytest.raises(BadJson, match="out of range"):
        check_json({"a": [1, {"b": float("inf")}]})
    with pytest.raises(BadJson, match="out of range"):
        check_json({"a": float("nan")})
    assert check_json({"a": 1e308, "b": 10**4000}) == {"a": 1e308, "b": 10**4000}


def test_the_error_is_json_the_client_can_read(staff, rows, api_for):
    answer = send_raw(
        api_for(staff), "POST", "/api/sessions/", '{"agent": ' + "1" * 5000 + "}"
    )

    assert answer.status_code == 400
    assert json.loads(answer.content)["detail"] == (
        "JSON parse error - Malformed JSON: an integer longer than 4300 digits is "
        "out of range."
    )
