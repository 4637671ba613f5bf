"""Real A2A peers the tests start: an ADK agent served by ADK's own `to_a2a` on
uvicorn, in a thread, on a free loopback port, behind a bearer token; and an
a2a-sdk server whose agent asks for more input before it answers (`asking_peer`).

The peer's model is offline and says what it heard, and how many user messages
its session holds, so a test can tell a continued remote conversation from a new
one. "fail" in a request makes the model fail (the remote task fails); "slow"
makes it take PEER_SLOW seconds.
"""

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Part,
    TaskState,
    TextPart,
)
from a2a.utils import new_agent_text_message, new_task
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.agents import LlmAgent
from google.adk.models import LlmRequest, LlmResponse
from starlette.responses import JSONResponse

from agents.adk.offline import OfflineLlm, is_user_text, part_texts, text_response

PEER_TOKEN = "peer-secret-token-4711"
PEER_SLOW = 5.0


class HeardLlm(OfflineLlm):
    """Answers `heard: <text> (message <n>)`; fails or dawdles when asked to."""

    async def generate_content_async(self, llm_request: LlmRequest, stream=False):
        users = [c for c in llm_request.contents if is_user_text(c)]
        text = part_texts(users[-1]) if users else ""
        if "slow" in text:
            await asyncio.sleep(PEER_SLOW)
        if "fail" in text:
            yield LlmResponse(error_code="BOOM", error_message="the peer's model broke")
            return
        yield text_response(f"heard: {text} (message {len(users)})")


def peer_agent(description: str = "Answers questions about trips.") -> LlmAgent:
    return LlmAgent(
        name="trip_helper",
        description=description,
        instruction="Answer the question.",
        model=HeardLlm(),
    )


@dataclass
class Peer:
    port: int
    seen: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def card_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/.well-known/agent-card.json"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def guarded(app, peer: Peer):
    """The card open to all, the endpoint only with the peer's bearer token."""

    async def guard(scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            auth = headers.get(b"authorization", b"").decode()
            peer.seen.append((scope["method"], scope["path"], auth))
            if scope["method"] == "POST" and auth != f"Bearer {PEER_TOKEN}":
                await JSONResponse({"error": "unauthorized"}, status_code=401)(
                    scope, receive, send
                )
                return
        await app(scope, receive, send)

    return guard


@contextmanager
def adk_peer(agent: LlmAgent | None = None) -> Iterator[Peer]:
    """ADK's to_a2a app for `agent` on uvicorn, until the block ends."""
    port = free_port()
    with served(
        to_a2a(agent or peer_agent(), host="127.0.0.1", port=port), port
    ) as peer:
        yield peer


class Asker(AgentExecutor):
    """Asks which month first; books the trip once told, in the same task."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if task.status.state == TaskState.input_required:
            text = f"booked for {context.get_user_input()}"
            await updater.add_artifact([Part(root=TextPart(text=text))])
            await updater.complete()
            return
        question = new_agent_text_message("Which month?", task.context_id, task.id)
        await updater.requires_input(question, final=True)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


@contextmanager
def asking_peer() -> Iterator[Peer]:
    """An a2a-sdk server whose agent asks for input before it answers."""
    port = free_port()
    card = AgentCard(
        name="trip_booker",
        description="Books trips.",
        url=f"http://127.0.0.1:{port}/",
        version="1.0",
        capabilities=AgentCapabilities(),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="book", name="book", description="Books.", tags=[])],
    )
    handler = DefaultRequestHandler(Asker(), InMemoryTaskStore())
    app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
    with served(app, port) as peer:
        yield peer


@contextmanager
def served(app, port: int) -> Iterator[Peer]:
    """An ASGI app on uvicorn in a thread, behind the peer's token."""
    peer = Peer(port)
    config = uvicorn.Config(
        guarded(app, peer), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the A2A peer did not start"
        time.sleep(0.05)
    try:
        yield peer
    finally:
        server.should_exit = True
        thread.join(timeout=10)
