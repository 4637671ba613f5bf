"""A real SMTP server, a real webhook receiver, and requests waiting on people."""

import json
import socket
import threading
import time
from collections.abc import Callable
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest
from aiosmtpd.controller import Controller
from django.contrib.auth.models import Group

from agents.models import Request, WebhookDestination
from agents.notices.sending import SECRET_PURPOSE, URL_PURPOSE
from project.sealing import seal


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Inbox:
    """What the SMTP server received: each mail, and who it was sent to."""

    def __init__(self) -> None:
        self.mails: list[tuple[list[str], EmailMessage]] = []

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's
        mail = message_from_bytes(envelope.content, policy=policy.default)
        self.mails.append((list(envelope.rcpt_tos), mail))
        return "250 OK"


@pytest.fixture
def smtp(settings):
    """A real SMTP server on a free port, and the settings that send to it."""
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = controller.port
    settings.EMAIL_TIMEOUT = 5
    yield inbox
    controller.stop()


class Receiver:
    """A local HTTP server that keeps every POST, and answers as told."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict[str, str], bytes]] = []
        self.status = 200
        self.delay = 0.0
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.posts.append((self.path, dict(self.headers), body))
                time.sleep(received.delay)
                self.send_response(received.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def json(self, index: int = -1) -> dict:
        return json.loads(self.posts[index][2])

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    found = Receiver()
    yield found
    found.close()


@pytest.fixture
def team(make_user) -> dict:
    """alice asks; carol and dave are managers; erin is staff outside the group."""
    people = {
        name: make_user(name, is_staff=name == "erin")
        for name in ("alice", "carol", "dave", "erin")
    }
    for user in people.values():
        user.email = f"{user.username}@example.com"
        user.save(update_fields=["email"])
    managers = Group.objects.create(name="managers")
    managers.user_set.add(people["carol"], people["dave"])
    return people


@pytest.fixture
def make_request(team) -> Callable[..., Request]:
    """A pending request alice asked through an MCP client (no session)."""
    made = iter(range(1, 1000))

    def make(**fields) -> Request:
        values = {
            "kind": Request.Kind.APPROVAL,
            "caller": team["alice"],
            "client": "claude-code",
            "agent": "claude-code",
            "call_id": f"call-{next(made)}",
            "tool_name": "send_money",
            "args": {"to": "bob", "amount": 500},
            "answer_group": "managers",
        }
        return Request.objects.create(**(values | fields))

    return make


def make_destination(*, url: str, secret: str = "", **fields) -> WebhookDestination:
    """A webhook destination as staff's API stores it: URL and secret sealed."""
    return WebhookDestination.objects.create(
        sealed_url=seal(URL_PURPOSE, url),
        host=urlsplit(url).hostname,
        sealed_secret=seal(SECRET_PURPOSE, secret) if secret else "",
        **fields,
    )
