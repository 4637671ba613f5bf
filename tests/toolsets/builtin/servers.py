"""A loopback HTTP server the tests start: 127.0.0.1, a free port, routes per test."""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    chunked: bool = False  # no Content-Length: the body ends when the socket closes


Route = Reply | Callable[["Handler"], Reply]


class Handler(BaseHTTPRequestHandler):
    server: "LoopbackServer"

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    @property
    def body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _answer(self) -> None:
        self.server.seen.append((self.command, self.path, dict(self.headers)))
        route = self.server.routes.get(self.path.split("?", 1)[0])
        reply = Reply(404, b"not found") if route is None else route
        if callable(reply):
            reply = reply(self)
        time.sleep(reply.delay)
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.chunked:
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.routes: dict[str, Route] = {}
        self.seen: list[tuple[str, str, dict[str, str]]] = []

    @property
    def port(self) -> int:
        return self.server_address[1]

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


def serve() -> LoopbackServer:
    server = LoopbackServer()
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    return server


def stop(server: LoopbackServer) -> None:
    server.shutdown()
    server.server_close()


def json_reply(data: Any, status: int = 200) -> Reply:
    return Reply(
        status, json.dumps(data).encode(), {"Content-Type": "application/json"}
    )


def html_reply(html: str) -> Reply:
    return Reply(200, html.encode(), {"Content-Type": "text/html; charset=utf-8"})
