"""A scripted Ollama server on 127.0.0.1, for tests.

Real HTTP, in a thread, speaking Ollama's own API (not its OpenAI-compatible
one): GET /api/tags lists `models`; each POST /api/chat plays the next scripted
reply, streamed as NDJSON lines (or one JSON body when `stream` is false), with
tool calls whose arguments are objects, as Ollama sends them. Like Ollama, it
answers 400 to a message whose `content` is not a string, and 404 to a model it
does not serve. It records every request.

    with FakeOllama([call("get_weather_report", city="Oslo"), say("Cold.")]) as s:
        ... a connection of kind ollama at s.url ...
"""

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "llama3.2:1b"


@dataclass
class Reply:
    """One scripted answer: text or tool calls."""

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def say(text: str) -> Reply:
    """Answer with this text, streamed a word at a time."""
    return Reply(text=text)


def call(name: str, /, **args: Any) -> Reply:
    """Answer with one tool call."""
    return Reply(tool_calls=[(name, args)])


class FakeOllama:
    """The server: start with `with`, script with `play()`, inspect `requests`."""

    def __init__(self, script: Sequence[Reply] = ()) -> None:
        self.models = [MODEL]
        self.requests: list[dict[str, Any]] = []
        self.refusals: list[str] = []
        self._script = list(script)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def play(self, *replies: Reply) -> None:
        """Append replies to the script."""
        with self._lock:
            self._script.extend(replies)

    def __enter__(self) -> "FakeOllama":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict[str, Any]) -> Reply | None:
        with self._lock:
            self.requests.append(body)
            return self._script.pop(0) if self._script else None

    def _refusal(self, body: Mapping[str, Any]) -> str | None:
        """What Ollama would answer 400 or 404 to, or None."""
        if body.get("model") not in self.models:
            return f"model '{body.get('model')}' not found"
        for message in body.get("messages") or []:
            if not isinstance(message.get("content", ""), str):
                return (
                    "json: cannot unmarshal array into Go struct field "
                    "Message.messages.content of type string"
                )
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet

            def do_GET(self) -> None:
                if self.path.rstrip("/") != "/api/tags":
                    self._json(404, {"error": "not found"})
                    return
                models = [{"name": m, "model": m, "size": 1} for m in server.models]
                self._json(200, {"models": models})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/api/chat":
                    self._json(404, {"error": "not found"})
                    return
                refusal = server._refusal(body)
                if refusal is not None:
                    server.refusals.append(refusal)
                    status = 404 if refusal.startswith("model") else 400
                    self._json(status, {"error": refusal})
                    return
                reply = server._next(body)
                if reply is None:
                    self._json(500, {"error": "the test script has no more replies"})
                    return
                if body.get("stream", True):
                    self._stream(reply, body["model"])
                else:
                    self._json(
                        200, {**lines(reply, body["model"])[-1], **_whole(reply)}
                    )

            def _json(self, status: int, payload: Mapping[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: Reply, model: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Connection", "close")
                self.end_headers()
                for line in lines(reply, model):
                    self.wfile.write(json.dumps(line).encode() + b"\n")
                    self.wfile.flush()
                self.close_connection = True

        return Handler


def _message(content: str = "", calls: Sequence[tuple[str, dict]] = ()) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"function": {"name": name, "arguments": args}} for name, args in calls
        ]
    return message


def _whole(reply: Reply) -> dict[str, Any]:
    return {"message": _message(reply.text, reply.tool_calls)}


def lines(reply: Reply, model: str) -> list[dict[str, Any]]:
    """The NDJSON lines of a reply, as Ollama streams them; the last one is done."""
    return list(_lines(reply, model))


def _lines(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
    stamp = "2026-12-07T12:00:00Z"
    words = reply.text.split(" ") if reply.text else []
    for i, word in enumerate(words):
        text = word if i == 0 else f" {word}"
        yield {
            "model": model,
            "created_at": stamp,
            "message": _message(text),
            "done": False,
        }
    if reply.tool_calls:
        yield {
            "model": model,
            "created_at": stamp,
            "message": _message("", reply.tool_calls),
            "done": False,
        }
    yield {
        "model": model,
        "created_at": stamp,
        "message": _message(),
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 20,
        "eval_count": 5,
    }
