"""Ids and numbers a user types, queued turns, and the session page (issue 14: 8, 11, 12).

Unicode digits (`²` is a digit to Python's int() and str.isdigit()) and integers past
the database's range must be refused as bad input (400) or as no such thing (404),
never a 500; a burst of messages may queue only a few turns; the session page is
there only for someone who may see the session.
"""

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator
from google.adk.agents import LlmAgent
from rest_framework.test import APIClient

from agents.adk.builder import sync_code_agents
from agents.adk.offline import OfflineLlm
from agents.models import Run
from project.asgi import application

TIMEOUT = 10
UNICODE_DIGIT = "%C2%B2"  # "²"
TOO_BIG = "99999999999999999999999"
BIGINT_MAX = 2**63 - 1

# (method, route, body, who may use it)
INTEGER_ID_ROUTES = [
    ("get", "/api/approvals/{id}/", None, "alice"),
    ("post", "/api/approvals/{id}/decide/", {"approved": True}, "alice"),
    ("get", "/api/auth-requests/{id}/", None, "alice"),
    ("post", "/api/auth-requests/{id}/answer/", {"api_key": "k"}, "alice"),
    ("delete", "/api/credentials/{id}/", None, "alice"),
    ("get", "/api/tool-calls/{id}/", None, "alice"),
    ("get", "/api/budgets/{id}/", None, "alice"),
    ("get", "/api/grants/{id}/", None, "staff"),
    ("get", "/api/imports/{id}/", None, "staff"),
    ("post", "/api/imports/{id}/refresh/", None, "staff"),
]


@pytest.fixture
def staff(make_user):
    return make_user("root", is_staff=True)


def token_of(user) -> str:
    """A token through the API's own contract (the make_user password is "pw")."""
    response = APIClient().post(
        "/api/auth/token/", {"username": user.username, "password": "pw"}
    )
    assert response.status_code == 200, response.content
    return response.json()["token"]


# 8. Unicode digits and out-of-range integers


@pytest.mark.django_db
@pytest.mark.parametrize(
    "value", [UNICODE_DIGIT, "%D9%A3", TOO_BIG, str(BIGINT_MAX + 1)]
)
@pytest.mark.parametrize(("method", "route", "body", "who"), INTEGER_ID_ROUTES)
def test_a_bad_integer_id_is_404(request, api_for, value, method, route, body, who):
    client = api_for(request.getfixturevalue(who))

    response = getattr(client, method)(route.format(id=value), body, format="json")

    assert response.status_code == 404, response.content
    assert response.json() == {"detail": "Not found."}


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["alice", "staff"])
@pytest.mark.parametrize(
    ("path", "value"),
    [
        *(("/api/access/", v) for v in (UNICODE_DIGIT, TOO_BIG, "-1", "1.5", "0x10")),
        # The audit's filter also takes a username: digits of any script mean an id.
        *(("/api/tool-calls/", v) for v in (UNICODE_DIGIT, "%D9%A3", TOO_BIG)),
    ],
)
def test_a_bad_user_id_filter_is_400(request, api_for, who, path, value):
    client = api_for(request.getfixturevalue(who))

    response = client.get(f"{path}?user={value}")

    assert response.status_code == 400, response.content
    assert "user" in response.json()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        f"after={UNICODE_DIGIT}",
        f"after={TOO_BIG}",
        f"limit={UNICODE_DIGIT}",
        f"limit={TOO_BIG}",
        "after=-1",
    ],
)
def test_a_bad_number_on_a_session_list_is_400(
    alice, api_for, demo_agents, start_session, query
):
    session = start_session(alice, "weather_sentiment")

    response = api_for(alice).get(f"/api/sessions/{session}/events/?{query}")

    assert response.status_code == 400, response.content
    assert query.split("=")[0] in response.json()


@pytest.mark.django_db
@pytest.mark.parametrize("query", [f"limit={UNICODE_DIGIT}", f"limit={TOO_BIG}"])
def test_a_bad_audit_limit_is_400(staff, api_for, query):
    response = api_for(staff).get(f"/api/tool-calls/?{query}")

    assert response.status_code == 400, response.content
    assert "limit" in response.json()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("value", [UNICODE_DIGIT, TOO_BIG, "abc"])
async def test_a_bad_after_on_the_socket_handshake_is_refused(
    alice, demo_agents, start_session, value
):
    session = await sync(start_session)(alice, "weather_sentiment")
    token = await sync(token_of)(alice)
    socket = WebsocketCommunicator(
        application, f"/ws/sessions/{session}/?after={value}&token={token}"
    )
    connected, _ = await socket.connect(timeout=TIMEOUT)
    assert connected

    error = await socket.receive_json_from(timeout=TIMEOUT)
    closed = await socket.receive_output(timeout=TIMEOUT)

    assert error["type"] == "error"
    assert error["error"]["code"] == "bad_request"
    assert "after" in error["error"]["message"]
    assert closed == {"type": "websocket.close", "code": 4400}


@pytest.mark.django_db(transaction=True)
async def test_a_bad_user_on_the_firehose_handshake_is_refused(staff):
    token = await sync(token_of)(staff)
    socket = WebsocketCommunicator(
        application, f"/ws/firehose/?user={UNICODE_DIGIT}&token={token}"
    )
    connected, _ = await socket.connect(timeout=TIMEOUT)
    assert connected

    error = await socket.receive_json_from(timeout=TIMEOUT)
    closed = await socket.receive_output(timeout=TIMEOUT)

    assert error["error"]["code"] == "bad_request"
    assert closed == {"type": "websocket.close", "code": 4400}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("until=2026-13-45T00:00", 400),  # a 13th month: a 500 on any database
        ("since=0001-01-01T00:00%2B20:00", 400),  # before year 1 in UTC
        ("until=0056-01-19T13:09:08.1180%2B20:11", 200),  # PostgreSQL: +20:11, a 500
    ],
)
def test_an_audit_date_is_read_or_refused(staff, api_for, query, status):
    response = api_for(staff).get(f"/api/tool-calls/?{query}")

    assert response.status_code == status, response.content


# NUL in a path or a query: PostgreSQL refuses it in any text it compares (a 500)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "/api/sessions/%00/",
        "/api/sessions/a%00b/events/",
        "/api/sessions/%00/toolsets/",
        "/api/agents/%00/",
        "/api/agents/%00/tools/",
        "/api/toolsets/%00/",
        "/api/tools/math.%00/",
    ],
)
def test_a_nul_in_a_path_name_is_404(staff, api_for, path):
    response = api_for(staff).get(path)

    assert response.status_code == 404, response.content
    assert response.json() == {"detail": "Not found."}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("/api/tool-calls/?user=a%00", "user"),
        ("/api/tools/?toolset=%00", "toolset"),
        ("/api/approvals/?session=%00", "session"),
        ("/api/grants/?user=%00", "user"),
        ("/api/memory/?agent=%00&q=x", "agent"),
    ],
)
def test_a_nul_in_a_query_parameter_is_400(staff, api_for, query, field):
    response = api_for(staff).get(query)

    assert response.status_code == 400, response.content
    assert field in response.json()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("/api/approvals/?session=a&session=b", "session"),
        ("/api/requests/?status=pending&status=answered", "status"),
        ("/api/tool-calls/?limit=1&limit=500", "limit"),
    ],
)
def test_a_repeated_query_parameter_is_400(staff, api_for, query, field):
    # A view reads one value of a parameter; which of two it reads is not the
    # client's to guess (the schema documents every parameter as one value).
    response = api_for(staff).get(query)

    assert response.status_code == 400, response.content
    assert response.json() == {field: ["Give this parameter once."]}


@pytest.mark.django_db
def test_the_session_page_of_a_nul_id_is_404(client, alice):
    client.force_login(alice)

    assert client.get("/sessions/%00/").status_code == 404


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", ["/ws/sessions/%00/", "/ws/agents/%00/"])
async def test_a_nul_in_a_socket_path_is_4404(alice, path):
    token = await sync(token_of)(alice)
    socket = WebsocketCommunicator(application, f"{path}?token={token}")
    connected, _ = await socket.connect(timeout=TIMEOUT)
    assert connected

    closed = await socket.receive_output(timeout=TIMEOUT)

    assert closed == {"type": "websocket.close", "code": 4404}


# 11. Queued turns


@pytest.mark.django_db
def test_the_sixth_queued_message_of_a_session_is_429(
    alice, api_for, demo_agents, start_session
):
    # Inside the test's transaction no turn starts: each message stays queued.
    session = start_session(alice, "weather_sentiment")
    client = api_for(alice)

    answers = [
        client.post(f"/api/sessions/{session}/messages/", {"text": "hi"}, format="json")
        for _ in range(6)
    ]

    assert [a.status_code for a in answers] == [202] * 5 + [429]
    assert "turns" in answers[-1].json()["detail"]
    assert Run.objects.filter(session_id=session).count() == 5


@pytest.mark.django_db
def test_queued_turns_are_capped_per_user_across_sessions(
    alice, bob, api_for, demo_agents, start_session, settings
):
    settings.TOOLCRIB_MAX_QUEUED_TURNS_PER_SESSION = 3
    settings.TOOLCRIB_MAX_QUEUED_TURNS_PER_USER = 4
    first, second = (start_session(alice, "weather_sentiment") for _ in range(2))
    bobs = start_session(bob, "weather_sentiment")
    client = api_for(alice)

    def send(session: str) -> int:
        return client.post(
            f"/api/sessions/{session}/messages/", {"text": "hi"}, format="json"
        ).status_code

    assert [send(first) for _ in range(4)] == [202, 202, 202, 429]
    assert [send(second) for _ in range(2)] == [202, 429]
    assert (
        api_for(bob)
        .post(f"/api/sessions/{bobs}/messages/", {"text": "hi"}, format="json")
        .status_code
        == 202
    )


GATE = threading.Event()


class GatedLlm(OfflineLlm):
    """The offline model, holding every answer until the test opens the gate."""

    async def generate_content_async(self, llm_request, stream: bool = False):
        while not GATE.is_set():
            await asyncio.sleep(0.01)
        async for response in super().generate_content_async(llm_request, stream):
            yield response


def gated_agent() -> LlmAgent:
    return LlmAgent(name="gated_agent", model=GatedLlm(), instruction="Echo.")


@pytest.fixture
def gated(settings, start_session):
    settings.TOOLCRIB_AGENTS = [
        *settings.TOOLCRIB_AGENTS,
        "tests.security.test_ids_and_limits.gated_agent",
    ]
    sync_code_agents()
    GATE.clear()
    yield
    GATE.set()


async def replies(socket: WebsocketCommunicator, count: int) -> list[dict]:
    """The next `count` acks and errors, skipping the event frames in between."""
    found = []
    while len(found) < count:
        frame = await socket.receive_json_from(timeout=TIMEOUT)
        if frame["type"] in {"ack", "error"}:
            found.append(frame)
    return found


async def wait_until_all_finished(session: str) -> None:
    for _ in range(int(TIMEOUT / 0.05)):
        unfinished = Run.objects.filter(
            session_id=session, status__in=[Run.Status.QUEUED, Run.Status.RUNNING]
        )
        if not await unfinished.aexists():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the queued turns did not finish")


@pytest.mark.django_db(transaction=True)
async def test_a_burst_of_100_message_frames_queues_only_five_turns(
    alice, gated, start_session
):
    session = await sync(start_session)(alice, "gated_agent")
    token = await sync(token_of)(alice)
    socket = WebsocketCommunicator(
        application, f"/ws/sessions/{session}/?token={token}"
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]

    for number in range(100):
        await socket.send_json_to({"type": "message", "text": f"message {number}"})
    answers = await replies(socket, 100)

    assert [a["type"] for a in answers] == ["ack"] * 5 + ["error"] * 95
    assert {a["error"]["code"] for a in answers[5:]} == {"too_many_turns"}
    assert await Run.objects.filter(session_id=session).acount() == 5
    GATE.set()
    await wait_until_all_finished(session)
    await socket.disconnect()


# 12. The session page


@pytest.mark.django_db
def test_the_session_page_is_404_for_someone_elses_session(
    client, alice, bob, demo_agents, start_session
):
    session = start_session(alice, "weather_sentiment")
    client.force_login(bob)

    assert client.get(f"/sessions/{session}/").status_code == 404
    assert client.get("/sessions/no-such-session/").status_code == 404


@pytest.mark.django_db
def test_the_session_page_opens_for_its_owner_and_staff(
    client, alice, staff, demo_agents, start_session
):
    session = start_session(alice, "weather_sentiment")

    client.force_login(alice)
    assert client.get(f"/sessions/{session}/").status_code == 200
    client.force_login(staff)
    assert client.get(f"/sessions/{session}/").status_code == 200
