"""Real A2A peers against a live Daphne: a2a-sdk's client, and ADK's own
RemoteA2aAgent delegating to a Toolcrib agent, each started by the test.

The server runs in a process of its own, on a migrated SQLite file with the demo
users (admin, alice, bob; bob manages) and agents; admin switches A2A on for two
agents through the REST API, as staff would.
"""

from collections.abc import Iterator
from uuid import uuid4

import httpx
import pytest
from a2a.client import (
    A2ACardResolver,
    A2AClientHTTPError,
    ClientConfig,
    ClientFactory,
)
from a2a.client.errors import A2AClientJSONRPCError
from a2a.types import (
    Message,
    Part,
    Role,
    Task,
    TaskIdParams,
    TaskQueryParams,
    TaskState,
    TextPart,
)
from google.adk.a2a.agent import RemoteA2aAgent
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.genai import types

from agents.adk.offline import OfflineLlm, OfflineStep
from tests.live.server import LiveServer, daphne, prepare_database, server_env

TRIP = 'Ask for approval of 500 for "a conference trip"'
SERVED = ("calculator", "reimbursement")


@pytest.fixture(scope="module")
def live_env(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("a2a")
    env = server_env(
        {
            "DATABASE_URL": f"sqlite:///{folder / 'a2a.sqlite3'}",
            "TOOLCRIB_DATA_DIR": str(folder),
        }
    )
    prepare_database(env)
    return env


@pytest.fixture(scope="module")
def server(live_env, tmp_path_factory) -> Iterator[LiveServer]:
    log = tmp_path_factory.mktemp("a2a-logs") / "daphne.log"
    with daphne(live_env, log) as live:
        admin = {"Authorization": f"Token {live.token('admin', 'admin')}"}
        for name in SERVED:
            response = httpx.patch(
                f"{live.url}/api/agents/{name}/", json={"a2a": True}, headers=admin
            )
            assert response.status_code == 200, response.text
        yield live


def bearer(server: LiveServer, username: str) -> httpx.AsyncClient:
    token = server.token(username, username)
    return httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)


async def sdk_client(http: httpx.AsyncClient, url: str, agent: str, *, streaming: bool):
    card = await A2ACardResolver(http, base_url=f"{url}/a2a/{agent}/").get_agent_card()
    config = ClientConfig(httpx_client=http, streaming=streaming)
    return card, ClientFactory(config).create(card)


def user_message(text: str) -> Message:
    return Message(
        role=Role.user, message_id=str(uuid4()), parts=[Part(root=TextPart(text=text))]
    )


def artifact_text(task: Task) -> str:
    return " ".join(
        part.root.text for artifact in task.artifacts or [] for part in artifact.parts
    )


async def test_the_sdk_client_sends_and_gets_a_task(server):
    async with bearer(server, "alice") as http:
        card, client = await sdk_client(http, server.url, "calculator", streaming=False)
        assert card.url == f"{server.url}/a2a/calculator/"
        [(task, _)] = [
            event async for event in client.send_message(user_message("Add 2 and 3"))
        ]
        again = await client.get_task(TaskQueryParams(id=task.id))
    assert task.status.state == TaskState.completed
    assert "5" in artifact_text(task)
    assert again.status.state == TaskState.completed
    assert again.context_id == task.context_id


async def test_the_sdk_client_streams_a_task_to_its_end(server):
    async with bearer(server, "alice") as http:
        _, client = await sdk_client(http, server.url, "calculator", streaming=True)
        events = [
            event async for event in client.send_message(user_message("Add 2 and 3"))
        ]
    task, last_update = events[-1]
    assert task.status.state == TaskState.completed
    assert last_update.final is True
    assert "5" in artifact_text(task)


async def test_an_approval_waits_for_the_manager_and_survives_a_restart(
    server, live_env, tmp_path_factory
):
    async with bearer(server, "alice") as http:
        _, client = await sdk_client(http, server.url, "reimbursement", streaming=True)
        events = [event async for event in client.send_message(user_message(TRIP))]
        task, _ = events[-1]
        assert task.status.state == TaskState.input_required
        # The request waits in bob's inbox (he manages), as for any turn.
        bob = {"Authorization": f"Token {server.token('bob', 'bob')}"}
        inbox = httpx.get(f"{server.url}/api/requests/", headers=bob).json()
        [asked] = [r for r in inbox if r["session"] == task.context_id]
    # Another server process on the same database: nothing was in memory.
    log = tmp_path_factory.mktemp("a2a-restart") / "daphne.log"
    with daphne(live_env, log) as other:
        answered = httpx.post(
            f"{other.url}/api/requests/{asked['id']}/answer/?wait=1",
            json={"response": {"status": "approved", "approver": "bob"}},
            headers=bob,
        )
        assert answered.status_code == 200, answered.text
        async with bearer(other, "alice") as http:
            _, client = await sdk_client(
                http, other.url, "reimbursement", streaming=False
            )
            done = await client.get_task(TaskQueryParams(id=task.id))
    assert done.status.state == TaskState.completed
    assert "500" in artifact_text(done)


async def test_the_sdk_client_cancels_a_waiting_task(server):
    async with bearer(server, "alice") as http:
        _, client = await sdk_client(http, server.url, "reimbursement", streaming=False)
        [(task, _)] = [event async for event in client.send_message(user_message(TRIP))]
        cancelled = await client.cancel_task(TaskIdParams(id=task.id))
    assert task.status.state == TaskState.input_required
    assert cancelled.status.state == TaskState.canceled


async def test_adks_remote_a2a_agent_delegates_to_a_toolcrib_agent(server):
    async with bearer(server, "alice") as http:
        remote = RemoteA2aAgent(
            name="toolcrib_calculator",
            agent_card=f"{server.url}/a2a/calculator/.well-known/agent-card.json",
            httpx_client=http,
        )
        root = LlmAgent(
            name="coordinator",
            model=OfflineLlm(
                script=[OfflineStep.call("transfer_to_agent", agent_name=remote.name)]
            ),
            sub_agents=[remote],
        )
        runner = InMemoryRunner(agent=root, app_name="peer")
        session = await runner.session_service.create_session(
            app_name="peer", user_id="someone"
        )
        message = types.Content(role="user", parts=[types.Part(text="Add 2 and 3")])
        events = [
            event
            async for event in runner.run_async(
                user_id="someone", session_id=session.id, new_message=message
            )
        ]
    answers = [
        part.text
        for event in events
        if event.author == remote.name and event.content
        for part in event.content.parts or []
        if part.text
    ]
    assert any("5" in text for text in answers), [e.model_dump() for e in events]
    # The delegation was a turn of alice's in Toolcrib: her session, her run.
    alice = {"Authorization": f"Token {server.token('alice', 'alice')}"}
    sessions = httpx.get(f"{server.url}/api/sessions/", headers=alice).json()
    listed = sessions["results"] if isinstance(sessions, dict) else sessions
    assert any(s["agent"] == "calculator" for s in listed)


async def rpc_error_code(call) -> int:
    """The JSON-RPC error code an a2a-sdk client call raised."""
    with pytest.raises(A2AClientJSONRPCError) as raised:
        await call
    return raised.value.error.code


async def test_the_sdk_client_reads_the_protocols_errors_for_another_callers_task(
    server,
):
    async with bearer(server, "bob") as http:
        _, client = await sdk_client(http, server.url, "calculator", streaming=False)
        [(bobs, _)] = [
            event async for event in client.send_message(user_message("Add 4 and 4"))
        ]
    async with bearer(server, "alice") as http:
        _, client = await sdk_client(http, server.url, "calculator", streaming=False)
        codes = [
            await rpc_error_code(client.get_task(TaskQueryParams(id=bobs.id))),
            await rpc_error_code(client.cancel_task(TaskIdParams(id=bobs.id))),
            await rpc_error_code(client.get_task(TaskQueryParams(id=str(uuid4())))),
        ]
        into_his = user_message("Add 1 and 1")
        into_his.context_id = bobs.context_id
        with pytest.raises(A2AClientJSONRPCError) as raised:
            [event async for event in client.send_message(into_his)]
    assert codes == [-32001, -32001, -32001]
    assert raised.value.error.code == -32602
    assert bobs.context_id not in raised.value.error.message


async def test_a_refused_token_is_401_to_both_peers_and_starts_nothing(server):
    bad = httpx.AsyncClient(headers={"Authorization": "Bearer 0123abcd"}, timeout=60)
    async with bad as http:
        # The card is public; the endpoint is not.
        _, client = await sdk_client(http, server.url, "calculator", streaming=False)
        with pytest.raises(A2AClientHTTPError) as raised:
            [event async for event in client.send_message(user_message("Add 2 and 3"))]
        remote = RemoteA2aAgent(
            name="toolcrib_calculator",
            agent_card=f"{server.url}/a2a/calculator/.well-known/agent-card.json",
            httpx_client=http,
        )
        runner = InMemoryRunner(agent=remote, app_name="peer")
        session = await runner.session_service.create_session(
            app_name="peer", user_id="someone"
        )
        message = types.Content(role="user", parts=[types.Part(text="Add 2 and 3")])
        events = [
            event
            async for event in runner.run_async(
                user_id="someone", session_id=session.id, new_message=message
            )
        ]
    assert raised.value.status_code == 401
    # ADK's agent ends its turn with the refusal as an error, never hanging.
    said = " ".join(
        f"{event.error_code} {event.error_message}"
        for event in events
        if event.error_code or event.error_message
    )
    assert "401" in said, [event.model_dump() for event in events]
