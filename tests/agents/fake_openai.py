"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

Real HTTP, in a thread: each POST /v1/chat/completions plays the next scripted
reply, streamed as SSE chunks (with a usage chunk when the client asks for one) or
as one JSON body; GET /v1/models lists `models`. It records every request it
received; a wrong key is answered 401 and an unknown message role 400, as OpenAI does.

    with FakeOpenAI([say("Hello there"), fail(500)]) as server:
        settings.TOOLCRIB_PROVIDER_ENV = server.env()
"""

import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

API_KEY = "sk-test-toolcrib"
MODEL = "fake-gpt"


@dataclass
class Reply:
    """One scripted answer: text, tool calls, an HTTP error, or a stall."""

    text: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    status: int = 200
    error: str = ""
    stall: float = 0.0
    usage: tuple[int, int] = (10, 5)


def say(text: str, *, usage: tuple[int, int] = (10, 5)) -> Reply:
    """Answer with this text, streamed a word at a time."""
    return Reply(text=text, usage=usage)


def call(name: str, /, *, usage: tuple[int, int] = (10, 5), **args: Any) -> Reply:
    """Answer with one tool call."""
    return Reply(tool_calls=[(name, args)], usage=usage)


def fail(status: int, message: str = "") -> Reply:
    """Answer with an HTTP error in OpenAI's error shape."""
    return Reply(status=status, error=message or f"scripted error {status}")


def stall(seconds: float) -> Reply:
    """Answer nothing for this long (longer than the client's timeout)."""
    return Reply(stall=seconds)


@dataclass
class Received:
    """One request as the server saw it."""

    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.body.get("tools") or []]


class FakeOpenAI:
    """The server: start with `with`, script with `play()`, inspect `requests`."""

    def __init__(self, script: Sequence[Reply] = (), *, api_key: str = API_KEY):
        self.api_key = api_key
        self.models = [MODEL]
        self.requests: list[Received] = []
        self._script = list(script)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def env(self, **extra: str) -> dict[str, str]:
        """Provider variables pointing the openai provider at this server."""
        return {"OPENAI_API_KEY": self.api_key, "OPENAI_API_BASE": self.url, **extra}

    def play(self, *replies: Reply) -> None:
        """Append replies to the script."""
        with self._lock:
            self._script.extend(replies)

    def __enter__(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()

    def _next(self, received: Received) -> Reply:
        with self._lock:
            self.requests.append(received)
            if not self._script:
                return fail(500, "the test script has no more replies")
            return self._script.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet

            def do_GET(self) -> None:
                if self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    self._error(401, "Incorrect API key provided.", "invalid_api_key")
                    return
                if self.path.rstrip("/") != "/v1/models":
                    self._error(404, "Not found.", "not_found")
                    return
                models = [{"id": m, "object": "model"} for m in server.models]
                self._json(200, {"object": "list", "data": models})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                received = Received(
                    {k.lower(): v for k, v in self.headers.items()}, body
                )
                if self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    server.requests.append(received)
                    self._error(401, "Incorrect API key provided.", "invalid_api_key")
                    return
                role = _unknown_role(body)
                if role is not None:
                    server.requests.append(received)
                    self._error(400, f"Invalid value: '{role}'.", "invalid_value")
                    return
                reply = server._next(received)
                if reply.stall:
                    server._stop.wait(reply.stall)
                    return
                if reply.status != 200:
                    self._error(reply.status, reply.error, "scripted")
                    return
                if body.get("stream"):
                    include_usage = (body.get("stream_options") or {}).get(
                        "include_usage"
                    )
                    self._stream(reply, bool(include_usage))
                else:
                    self._json(200, completion(reply))

            def _error(self, status: int, message: str, code: str) -> None:
                error = {"message": message, "type": "api_error", "code": code}
                self._json(status, {"error": error})

            def _json(self, status: int, payload: Mapping[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: Reply, include_usage: bool) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in stream_chunks(reply, include_usage):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    time.sleep(0.002)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler


ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


def _unknown_role(body: Mapping[str, Any]) -> str | None:
    """A message role OpenAI refuses (400), as a strict server does; else None."""
    return next(
        (
            m.get("role")
            for m in body.get("messages") or []
            if m.get("role") not in ROLES
        ),
        None,
    )


def _chunk(delta: Mapping[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}],
    }


def _usage(reply: Reply) -> dict[str, int]:
    prompt, completion_tokens = reply.usage
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }


def stream_chunks(reply: Reply, include_usage: bool) -> Iterator[dict[str, Any]]:
    """The SSE chunks of a reply, as OpenAI streams them."""
    yield _chunk({"role": "assistant", "content": ""})
    if reply.text is not None:
        words = reply.text.split(" ")
        for i, word in enumerate(words):
            yield _chunk({"content": word if i == 0 else f" {word}"})
    for index, (name, args) in enumerate(reply.tool_calls):
        arguments = json.dumps(args)
        half = len(arguments) // 2
        yield _chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": f"call_{index}_{name}",
                        "type": "function",
                        "function": {"name": name, "arguments": arguments[:half]},
                    }
                ]
            }
        )
        yield _chunk(
            {
                "tool_calls": [
                    {"index": index, "function": {"arguments": arguments[half:]}}
                ]
            }
        )
    yield _chunk({}, "tool_calls" if reply.tool_calls else "stop")
    if include_usage:
        last = _chunk({})
        last["choices"] = []
        last["usage"] = _usage(reply)
        yield last


def completion(reply: Reply) -> dict[str, Any]:
    """A reply as one (non-streamed) chat.completion body."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{index}_{name}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for index, (name, args) in enumerate(reply.tool_calls)
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": _usage(reply),
    }
