"""tool_choice for a turn's first model call: from a message (REST and socket), from
the agent (its row, over the API), from settings; as the seed (004) forces a call:
`{"mode": "required", "required_function_name": "get_record"}`."""

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator

from agents.models import Run
from agents.tokens import issue_token
from project.asgi import application
from tests.toolsets import exposed, seed004
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "guarded_record_agent"  # declares get_record and update_record
BOTH = ["get_record", "update_record"]
FORCE_GET = {"mode": "required", "required_function_name": "get_record"}
TIMEOUT = 10


@pytest.fixture(autouse=True)
def _seed_agents(toolcrib_settings):
    toolcrib_settings.TOOLCRIB_AGENTS = [
        *toolcrib_settings.TOOLCRIB_AGENTS,
        f"tests.toolsets.seed004.{AGENT}",
    ]
    toolcrib_settings.TOOLCRIB_FORCED_FIRST_TOOL = {}
    exposed.SEEN.clear()
    seed004.UPDATED.clear()


@pytest.fixture
def send(api_for):
    def post(user, session: str, body: dict):
        url = f"/api/sessions/{session}/messages/?wait=1"
        return api_for(user).post(url, body, format="json")

    return post


def first_step() -> tuple[list[str], str, list[str]]:
    return exposed.SEEN[0]


def test_a_message_forces_the_first_call_then_the_model_is_free(
    catalog, alice, start_session, send
):
    session = start_session(alice, AGENT)

    response = send(
        alice,
        session,
        {
            "text": "Update record REC-42 to status 'in-progress'.",
            "tool_choice": FORCE_GET,
        },
    )

    assert response.status_code == 200, response.content
    assert first_step() == (["get_record"], "ANY", ["get_record"])
    assert exposed.SEEN[1] == (BOTH, "AUTO", [])
    assert Run.objects.get().tool_choice == FORCE_GET


def test_required_makes_the_model_call_some_tool(catalog, alice, start_session, send):
    send(alice, start_session(alice, AGENT), {"text": "hi", "tool_choice": "required"})

    assert first_step() == (BOTH, "ANY", [])


def test_none_offers_no_tool_and_refuses_a_call_anyway(
    catalog, alice, start_session, send
):
    send(alice, start_session(alice, AGENT), {"text": "hi", "tool_choice": "none"})

    assert first_step() == ([], "AUTO", [])
    refused = ToolCall.objects.get(tool_name="get_record")  # the script calls it
    assert (refused.status, refused.attempts) == ("not_offered", 0)


def test_the_agents_choice_holds_unless_the_message_says_otherwise(
    catalog, alice, staff, start_session, send, api_for
):
    changed = api_for(staff).patch(
        f"/api/agents/{AGENT}/", {"tool_choice": "required"}, format="json"
    )
    assert changed.status_code == 200, changed.content
    assert changed.json()["tool_choice"] == "required"
    session = start_session(alice, AGENT)

    send(alice, session, {"text": "hi"})
    agents_choice = first_step()
    exposed.SEEN.clear()
    send(alice, session, {"text": "hi", "tool_choice": {"mode": "auto"}})

    assert agents_choice == (BOTH, "ANY", [])
    assert first_step() == (BOTH, "AUTO", [])


def test_the_setting_is_the_default_and_the_agents_row_overrides_it(
    catalog, alice, staff, start_session, send, api_for, toolcrib_settings
):
    toolcrib_settings.TOOLCRIB_FORCED_FIRST_TOOL = {AGENT: "update_record"}
    session = start_session(alice, AGENT)

    send(alice, session, {"text": "hi"})
    by_setting = first_step()
    api_for(staff).patch(
        f"/api/agents/{AGENT}/", {"tool_choice": "auto"}, format="json"
    )
    exposed.SEEN.clear()
    send(alice, session, {"text": "hi"})

    assert by_setting == (["update_record"], "ANY", ["update_record"])
    assert first_step() == (BOTH, "AUTO", [])


def test_only_staff_choose_for_an_agent_and_only_its_tool_choice_in_code(
    catalog, alice, staff, api_for
):
    url = f"/api/agents/{AGENT}/"

    assert (
        api_for(alice).patch(url, {"tool_choice": "none"}, format="json").status_code
        == 403
    )
    other = api_for(staff).patch(url, {"instruction": "Be brief."}, format="json")
    assert other.status_code == 400
    bad = api_for(staff).patch(url, {"tool_choice": "sometimes"}, format="json")
    assert bad.status_code == 400
    assert "tool_choice" in bad.json()


def test_an_unknown_field_in_a_message_is_refused_and_starts_no_turn(
    catalog, alice, start_session, send
):
    response = send(
        alice, start_session(alice, AGENT), {"text": "hi", "tool_mode": "none"}
    )

    assert response.status_code == 400
    assert response.json() == {"tool_mode": ["Extra inputs are not permitted"]}
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    "choice",
    [
        "sometimes",
        {"mode": "none", "required_function_name": "get_record"},
        {"mode": "required", "required_function_name": "not a name"},
        {"mode": "required", "function": "get_record"},
    ],
)
def test_a_bad_tool_choice_is_refused_with_a_field_error(
    catalog, alice, start_session, send, choice
):
    response = send(
        alice, start_session(alice, AGENT), {"text": "hi", "tool_choice": choice}
    )

    assert response.status_code == 400
    assert list(response.json()) == ["tool_choice"]
    assert not Run.objects.exists()


async def test_the_socket_message_frame_carries_a_tool_choice(
    catalog, alice, start_session
):
    session = await sync(start_session)(alice, AGENT)
    socket = await open_socket(alice, session)

    await socket.send_json_to({"type": "message", "text": "hi", "tool_mode": "x"})
    refused = await socket.receive_json_from(timeout=TIMEOUT)
    await socket.send_json_to(
        {"type": "message", "text": "hi", "tool_choice": FORCE_GET}
    )
    ack = await socket.receive_json_from(timeout=TIMEOUT)
    while (await socket.receive_json_from(timeout=TIMEOUT)).get("event", {}).get(
        "kind"
    ) != "run_finished":
        pass
    await socket.disconnect()

    assert refused["type"] == "error" and refused["error"]["code"] == "bad_frame"
    assert "tool_mode" in refused["error"]["message"]
    assert ack["type"] == "ack"
    assert first_step() == (["get_record"], "ANY", ["get_record"])


async def open_socket(user, session: str) -> WebsocketCommunicator:
    token = await sync(issue_token)(user=user)
    socket = WebsocketCommunicator(
        application,
        f"/ws/sessions/{session}/",
        headers=[(b"authorization", f"Token {token}".encode())],
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]
    return socket
