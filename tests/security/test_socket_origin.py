"""Cookie sockets and their Origin (issue 14: 7).

A socket signed in by the browser's session cookie is accepted only from the app's
own origin (scheme, host and port of the handshake) or one of CSRF_TRUSTED_ORIGINS,
the way Django's CsrfViewMiddleware checks a form post's Origin. Another port or
another scheme is another origin: another program on the same machine.
"""

import json

import pytest
from channels.testing import WebsocketCommunicator

from agents.realtime.consumers import CLOSE_FORBIDDEN
from project.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10


@pytest.fixture
def cookie_session(alice, demo_agents, start_session, client):
    """A session of alice's, and her browser's session cookie."""
    session = start_session(alice, "weather_sentiment")
    client.force_login(alice)
    return session, f"sessionid={client.cookies['sessionid'].value}".encode()


async def handshake(
    session: str, cookie: bytes, host: bytes, origin: bytes, scheme: str = "ws"
) -> WebsocketCommunicator:
    socket = WebsocketCommunicator(
        application,
        f"/ws/sessions/{session}/",
        headers=[(b"host", host), (b"cookie", cookie), (b"origin", origin)],
    )
    socket.scope["scheme"] = scheme
    connected, _ = await socket.connect(timeout=TIMEOUT)
    assert connected
    return socket


async def refused_with(socket: WebsocketCommunicator) -> int | None:
    """The close code the server sent, or None if the socket answers a ping."""
    await socket.send_json_to({"type": "ping"})
    message = await socket.receive_output(timeout=TIMEOUT)
    if message["type"] == "websocket.close":
        return message["code"]
    assert json.loads(message["text"]) == {"type": "pong"}
    await socket.disconnect()
    return None


@pytest.mark.parametrize(
    "host, origin, scheme",
    [
        (b"localhost:8000", b"http://localhost:9999", "ws"),
        (b"127.0.0.1:8000", b"https://127.0.0.1:4443", "ws"),
        (b"localhost:8000", b"https://localhost:8000", "ws"),
        (b"localhost:8000", b"http://localhost:8000", "wss"),
        (b"localhost:8000", b"http://localhost", "ws"),
    ],
    ids=[
        "other-port",
        "other-scheme-and-port",
        "https-page-plain-socket",
        "http-page-secure-socket",
        "default-port",
    ],
)
async def test_a_cookie_socket_from_another_origin_is_refused(
    cookie_session, host, origin, scheme
):
    session, cookie = cookie_session

    socket = await handshake(session, cookie, host, origin, scheme)

    assert await refused_with(socket) == CLOSE_FORBIDDEN


@pytest.mark.parametrize(
    "host, origin",
    [
        (b"evil.example:8000", b"http://evil.example:8000"),
        (b"localhost:8000", b"null"),
        (b"localhost:8000", b"https://evil.example"),
    ],
    ids=["host-not-allowed", "opaque-origin", "other-site"],
)
async def test_other_hosts_stay_refused(cookie_session, host, origin):
    session, cookie = cookie_session

    socket = await handshake(session, cookie, host, origin)

    assert await refused_with(socket) == CLOSE_FORBIDDEN


@pytest.mark.parametrize(
    "host, origin, scheme",
    [
        (b"localhost:8000", b"http://localhost:8000", "ws"),
        (b"127.0.0.1:4443", b"https://127.0.0.1:4443", "wss"),
        (b"localhost", b"http://localhost", "ws"),
    ],
)
async def test_a_cookie_socket_from_the_apps_own_origin_is_accepted(
    cookie_session, host, origin, scheme
):
    session, cookie = cookie_session

    socket = await handshake(session, cookie, host, origin, scheme)

    assert await refused_with(socket) is None


async def test_a_trusted_origin_behind_a_tls_proxy_is_accepted_and_only_it(
    cookie_session, settings
):
    # nginx terminates TLS and forwards `Host: toolcrib.example.com` over plain ws.
    settings.ALLOWED_HOSTS = ["toolcrib.example.com"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://toolcrib.example.com"]
    session, cookie = cookie_session
    host = b"toolcrib.example.com"

    trusted = await handshake(session, cookie, host, b"https://toolcrib.example.com")
    plain = await handshake(session, cookie, host, b"http://toolcrib.example.com:81")

    assert await refused_with(trusted) is None
    assert await refused_with(plain) == CLOSE_FORBIDDEN


async def test_a_wildcard_trusted_origin_matches_its_subdomains_on_its_scheme(
    cookie_session, settings
):
    settings.CSRF_TRUSTED_ORIGINS = ["https://*.example.com"]
    session, cookie = cookie_session
    host = b"localhost:8000"

    sub = await handshake(session, cookie, host, b"https://app.example.com")
    plain = await handshake(session, cookie, host, b"http://app.example.com")

    assert await refused_with(sub) is None
    assert await refused_with(plain) == CLOSE_FORBIDDEN
