"""API tokens are stored only as digests: reading the database yields no usable token.

Issue 14, High 3: the clear keys of DRF's authtoken table turned a read of the SQLite
file into a takeover of every account, the admin's included.
"""

import importlib
import json
import secrets

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.operations import RunPython

from agents.realtime.consumers import CLOSE_UNAUTHENTICATED
from project.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
OLD_TABLE = "authtoken_token"


def tables_holding(text: str) -> list[str]:
    """Every `table.column` of the database with a stored value containing text."""
    hits = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            names = [column[0] for column in cursor.description]
            for row in cursor.fetchall():
                hits += [
                    f"{table}.{name}"
                    for name, value in zip(names, row, strict=True)
                    if contains(value, text)
                ]
    return hits


def contains(value, text: str) -> bool:
    if isinstance(value, bytes | bytearray | memoryview):
        return text.encode() in bytes(value)
    return text in str(value)


def obtain_token(client, username: str, password: str) -> str:
    response = client.post(
        "/api/auth/token/",
        {"username": username, "password": password},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    return response.json()["token"]


async def socket_answers_ping(path: str, headers=()) -> bool:
    """Whether a session socket opened with these credentials answers a ping."""
    communicator = WebsocketCommunicator(application, path, headers=list(headers))
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    await communicator.send_json_to({"type": "ping"})
    message = await communicator.receive_output(timeout=TIMEOUT)
    await communicator.disconnect()
    if message["type"] == "websocket.close":
        assert message["code"] == CLOSE_UNAUTHENTICATED
        return False
    return json.loads(message["text"]) == {"type": "pong"}


async def token_opens_sockets(session_id: str, token: str) -> bool:
    path = f"/ws/sessions/{session_id}/"
    by_header = await socket_answers_ping(
        path, [(b"authorization", f"Token {token}".encode())]
    )
    by_query = await socket_answers_ping(f"{path}?token={token}")
    return by_header and by_query


def test_token_from_login_is_nowhere_in_the_database(client, make_user):
    make_user("carol", password="secret")

    token = obtain_token(client, "carol", "secret")

    assert tables_holding(token) == []
    agents = client.get("/api/agents/", HTTP_AUTHORIZATION=f"Token {token}")
    assert agents.status_code == 200


def test_each_login_gives_a_new_token_and_both_keep_working(client, make_user):
    make_user("carol", password="secret")

    first = obtain_token(client, "carol", "secret")
    second = obtain_token(client, "carol", "secret")

    assert first != second
    for token in (first, second):
        response = client.get("/api/agents/", HTTP_AUTHORIZATION=f"Token {token}")
        assert response.status_code == 200


async def test_token_from_login_opens_a_socket(
    client, make_user, demo_agents, start_session
):
    user = await sync_to_async(make_user)("carol", password="secret")
    session_id = await sync_to_async(start_session)(user, "weather_sentiment")

    token = await sync_to_async(obtain_token)(client, "carol", "secret")

    assert await token_opens_sockets(session_id, token)


async def test_a_digest_is_not_a_token(client, make_user, demo_agents, start_session):
    user = await sync_to_async(make_user)("carol", password="secret")
    session_id = await sync_to_async(start_session)(user, "weather_sentiment")
    await sync_to_async(obtain_token)(client, "carol", "secret")

    stolen = await sync_to_async(stored_token_values)()

    assert stolen
    for value in stolen:
        http = await sync_to_async(client.get)(
            "/api/agents/", HTTP_AUTHORIZATION=f"Token {value}"
        )
        assert http.status_code == 401
        assert not await socket_answers_ping(
            f"/ws/sessions/{session_id}/?token={value}"
        )


def stored_token_values() -> list[str]:
    """What a reader of the token table gets: its digests and key prefixes."""
    from knox.models import AuthToken

    rows = AuthToken.objects.values_list("digest", "token_key")
    return [value for row in rows for value in row]


@pytest.fixture
def drf_token_table(transactional_db):
    """The table DRF's authtoken app made on installations before hashed tokens."""
    create_drf_token_table()
    yield
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {connection.ops.quote_name(OLD_TABLE)}")


def create_drf_token_table() -> None:
    types = connection.data_types
    user_table = get_user_model()._meta.db_table
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {quote(OLD_TABLE)}")
        cursor.execute(
            f"CREATE TABLE {quote(OLD_TABLE)} ("
            f"{quote('key')} varchar(40) NOT NULL PRIMARY KEY, "
            f"{quote('created')} {types['DateTimeField']} NOT NULL, "
            f"{quote('user_id')} {types['IntegerField']} NOT NULL UNIQUE "
            f"REFERENCES {quote(user_table)} ({quote('id')}))"
        )


def insert_drf_token(key: str, user_id: int) -> None:
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(OLD_TABLE)} "
            f"({quote('key')}, {quote('created')}, {quote('user_id')}) "
            "VALUES (%s, %s, %s)",
            [key, "2024-01-01 00:00:00", user_id],
        )


def log_admin_change_of_drf_token(key: str, user_id: int) -> None:
    """What the admin's history kept when someone edited a token in DRF's admin."""
    token_type, _ = ContentType.objects.get_or_create(
        app_label="authtoken", model="token"
    )
    LogEntry.objects.create(
        user_id=user_id,
        content_type=token_type,
        object_id=key,
        object_repr=key,
        action_flag=ADDITION,
    )


def run_token_digests_migration() -> None:
    """Apply agents/migrations/0005_token_digests.py's data step to this database."""
    from django.apps import apps

    module = importlib.import_module("agents.migrations.0005_token_digests")
    steps = [op for op in module.Migration.operations if isinstance(op, RunPython)]
    assert steps, "0005_token_digests moves no tokens"
    with connection.schema_editor() as schema_editor:
        for step in steps:
            step.code(apps, schema_editor)


async def test_a_clear_drf_token_from_before_keeps_working_as_a_digest(
    client, make_user, demo_agents, start_session, drf_token_table
):
    user = await sync_to_async(make_user)("carol", password="secret")
    session_id = await sync_to_async(start_session)(user, "weather_sentiment")
    old_key = secrets.token_hex(20)  # what DRF's Token.generate_key() makes
    await sync_to_async(insert_drf_token)(old_key, user.id)
    await sync_to_async(log_admin_change_of_drf_token)(old_key, user.id)

    await sync_to_async(run_token_digests_migration)()

    assert await sync_to_async(tables_holding)(old_key) == []
    response = await sync_to_async(client.get)(
        "/api/agents/", HTTP_AUTHORIZATION=f"Token {old_key}"
    )
    assert response.status_code == 200
    assert await token_opens_sockets(session_id, old_key)
