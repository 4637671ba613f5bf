"""A live Daphne serving the gateway at /mcp, and real MCP clients to talk to it.

The server runs in a process of its own, on a migrated SQLite file with the demo
users (admin, alice, bob) and catalog; tests set grants and read the audit through
the REST API as admin, as a person would. Each test module gets a server and a
database of its own; within a module each test works on tools of its own, so
their grants and audit rows do not cross.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import httpx
import httpx2
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.live.server import LiveServer, daphne, prepare_database, server_env

CLIENT_NAME = "pytest-gateway"


@pytest.fixture(autouse=True)
def _fresh_access():
    """tests/toolsets' reset of the decision cache, off: the server process keeps
    its own cache and database, and these tests touch neither of this process."""


@pytest.fixture(scope="module")
def gateway_settings() -> dict[str, str]:
    """Environment the module's server runs with besides its database: a module
    overrides this fixture to set more."""
    return {}


@pytest.fixture(scope="module")
def gateway_env(tmp_path_factory, gateway_settings):
    folder = tmp_path_factory.mktemp("gateway")
    env = server_env(
        {
            "DATABASE_URL": f"sqlite:///{folder / 'gateway.sqlite3'}",
            "TOOLCRIB_DATA_DIR": str(folder),
            **gateway_settings,
        }
    )
    prepare_database(env)
    return env


@pytest.fixture(scope="module")
def gateway(gateway_env, tmp_path_factory) -> LiveServer:
    log = tmp_path_factory.mktemp("gateway-logs") / "daphne.log"
    with daphne(gateway_env, log) as server:
        yield server


@dataclass
class Api:
    """The REST API as one user, with her API token."""

    url: str
    token: str
    client: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.client = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Token {self.token}"}
        )

    def grant(self, **body) -> dict:
        response = self.client.post("/api/grants/", json=body)
        assert response.status_code == 201, response.text
        return response.json()

    def calls(self, **params) -> list[dict]:
        response = self.client.get("/api/tool-calls/", params=params)
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture(scope="module")
def api(gateway):
    """`api("alice")`: the REST API as that demo user (password = username)."""
    made: dict[str, Api] = {}

    def as_user(username: str) -> Api:
        if username not in made:
            made[username] = Api(gateway.url, gateway.token(username, username))
        return made[username]

    return as_user


@asynccontextmanager
async def mcp_client(
    url: str, token: str, *, name: str = CLIENT_NAME, on_message=None
) -> AsyncIterator[ClientSession]:
    """The Python SDK's client, initialized, on the gateway with a bearer token."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with streamable_http_client(f"{url}/mcp/", http_client=http) as (
            read,
            write,
        ):
            session = ClientSession(
                read,
                write,
                client_info=types.Implementation(name=name, version="1.0"),
                message_handler=on_message,
            )
            async with session:
                await session.initialize()
                yield session


async def tool_names(session: ClientSession) -> set[str]:
    return {tool.name for tool in (await session.list_tools()).tools}
