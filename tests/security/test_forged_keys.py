"""A forged token or session cookie with a NUL is refused, never a 500.

Found by the schema fuzz on PostgreSQL (whose text columns refuse NUL): a token
`abc\\x00def` in `Authorization: Token` or `?token=`, and a `sessionid` cookie with a
NUL, reached a query and answered 500. A real Daphne on a PostgreSQL database of
its own, spoken to over raw sockets, since HTTP clients refuse to send a NUL. Daphne
itself refuses a NUL in a header line; a quoted cookie's octal escape and a socket's
`?token=` carry one past it.
"""

import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
import websockets

from tests.integration import services
from tests.live.server import LiveServer, daphne, prepare_database, server_env


@pytest.fixture(scope="module")
def postgres_server(tmp_path_factory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("forged")
    with services.postgres_database(services.run_name()) as database_url:
        env = server_env(
            {"DATABASE_URL": database_url, "TOOLCRIB_DATA_DIR": str(folder)}
        )
        prepare_database(env)
        with daphne(env, folder / "daphne.log") as server:
            yield server


def raw_get(server: LiveServer, path: str, header: bytes) -> int:
    """The status of a GET sent byte for byte, with one extra header line."""
    address = urlsplit(server.url)
    request = (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n".encode()
        + header
        + b"\r\n\r\n"
    )
    with socket.create_connection((address.hostname, address.port), timeout=10) as s:
        s.sendall(request)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def test_daphne_itself_refuses_a_nul_in_a_header(postgres_server):
    status = raw_get(postgres_server, "/api/sessions/", b"Authorization: Token a\x00b")

    assert status == 400


@pytest.mark.parametrize(
    ("path", "status"), [("/api/sessions/", 401), ("/", 302), ("/inbox/", 302)]
)
def test_a_session_cookie_with_a_nul_is_no_session(postgres_server, path, status):
    # Django's cookie parser turns the quoted octal escape into a NUL.
    cookie = b'Cookie: sessionid="abcdefgh\\000ijklmnop"'

    assert raw_get(postgres_server, path, cookie) == status


async def test_a_socket_token_with_a_nul_is_refused_with_the_documented_code(
    postgres_server,
):
    url = f"{postgres_server.ws_url}/ws/firehose/?token=abc%00def"

    async with websockets.connect(url) as socket_:
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await socket_.recv()

    assert closed.value.rcvd.code == 4401


def test_the_valid_token_still_opens_the_api(postgres_server):
    token = postgres_server.token("alice", "alice")

    status = raw_get(
        postgres_server, "/api/sessions/", f"Authorization: Token {token}".encode()
    )

    assert status == 200
