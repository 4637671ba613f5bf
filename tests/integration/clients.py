"""Outside clients of a running Toolcrib: httpx for the API, `websockets` for streams."""

import asyncio
import json
from collections import defaultdict
from dataclasses import dataclass, field

import httpx
import websockets

from agents.events.wire import EventFrame
from tests.live.server import LiveServer

TIMEOUT = 30.0
RECONNECT_DELAY = 0.2
# What a client sees while a web process cannot reach Redis: a socket closed
# with 1011, a handshake refused with 500, a connection refused.
DROPPED = (websockets.ConnectionClosed, websockets.InvalidHandshake, OSError)


@dataclass
class Client:
    """One signed-in user of one web process."""

    server: LiveServer
    token: str

    @classmethod
    def sign_in(cls, server: LiveServer, username: str) -> "Client":
        return cls(server=server, token=server.token(username, username))

    def on(self, server: LiveServer) -> "Client":
        """The same user, on another web process."""
        return Client(server=server, token=self.token)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Token {self.token}"}

    def http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.server.url, headers=self.headers, timeout=TIMEOUT
        )

    def stream_url(self, session: str) -> str:
        return f"{self.server.ws_url}/ws/sessions/{session}/"

    def connect(self, session: str, after: int = 0):
        return websockets.connect(
            f"{self.stream_url(session)}?after={after}",
            additional_headers=self.headers,
            open_timeout=TIMEOUT,
        )

    async def create_session(self, agent: str) -> str:
        async with self.http() as http:
            response = await http.post("/api/sessions/", json={"agent": agent})
        response.raise_for_status()
        return response.json()["id"]

    async def say(self, session: str, text: str) -> str:
        """Send a message over the API without waiting; the Run's id."""
        async with self.http() as http:
            response = await http.post(
                f"/api/sessions/{session}/messages/", json={"text": text}
            )
        response.raise_for_status()
        return response.json()["id"]

    async def events(self, session: str) -> list[dict]:
        async with self.http() as http:
            response = await http.get(f"/api/sessions/{session}/events/?after=0")
        response.raise_for_status()
        return response.json()

    async def run(self, run_id: str) -> dict:
        async with self.http() as http:
            response = await http.get(f"/api/runs/{run_id}/")
        response.raise_for_status()
        return response.json()

    async def wait_for_run(self, run_id: str, timeout: float = TIMEOUT) -> dict:
        """Poll a run until it has ended."""
        async with asyncio.timeout(timeout):
            while True:
                run = await self.run(run_id)
                if run["status"] in {"succeeded", "failed", "waiting", "cancelled"}:
                    return run
                await asyncio.sleep(0.1)


async def next_frame(socket, timeout: float = TIMEOUT) -> dict:
    """The next frame; event frames are checked against the wire schema."""
    frame = json.loads(await asyncio.wait_for(socket.recv(), timeout))
    if frame.get("type") == "event":
        EventFrame.model_validate(frame)
    return frame


async def frames_until(socket, kind: str, timeout: float = TIMEOUT) -> list[dict]:
    """Stored event frames up to and including the first of `kind`."""
    frames = []
    async with asyncio.timeout(timeout):
        while True:
            frame = await next_frame(socket)
            if frame.get("type") != "event" or frame["seq"] is None:
                continue
            frames.append(frame)
            if frame["event"]["kind"] == kind:
                return frames


def kinds_of(frames: list[dict]) -> list[str]:
    return [frame["event"]["kind"] for frame in frames]


def seqs_of(frames: list[dict]) -> list[int]:
    return [frame["seq"] for frame in frames]


@dataclass
class Subscriber:
    """A client that follows a session and reconnects with `?after=<last seq>`.

    As docs/events.md asks a client to: it keeps every stored event once, in order.
    """

    client: Client
    session: str
    frames: list[dict] = field(default_factory=list)
    reconnects: int = 0
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    seen: defaultdict[str, asyncio.Event] = field(
        default_factory=lambda: defaultdict(asyncio.Event)
    )
    # By run id: set when its run_finished has come.
    finished: defaultdict[str, asyncio.Event] = field(
        default_factory=lambda: defaultdict(asyncio.Event)
    )
    socket: object | None = None

    @property
    def last_seq(self) -> int:
        return self.frames[-1]["seq"] if self.frames else 0

    async def follow(self, *, runs: int) -> None:
        """Keep every stored event until `runs` run_finished events have come."""
        while True:
            try:
                async with self.client.connect(self.session, self.last_seq) as socket:
                    self.socket = socket
                    self.ready.set()
                    if await self._read(socket, runs=runs):
                        self.socket = None
                        return
            except DROPPED:
                pass
            self.reconnects += 1
            await asyncio.sleep(RECONNECT_DELAY)

    async def _read(self, socket, *, runs: int) -> bool:
        async for raw in socket:
            frame = json.loads(raw)
            if frame.get("type") != "event" or frame["seq"] is None:
                continue
            EventFrame.model_validate(frame)
            self.frames.append(frame)
            kind = frame["event"]["kind"]
            self.seen[kind].set()
            if kind == "run_finished":
                self.finished[frame["event"]["run"]["id"]].set()
            if kinds_of(self.frames).count("run_finished") == runs:
                return True
        return False

    async def cut(self) -> bool:
        """Close the socket from this side, as a network that drops: the client
        reconnects with `?after=<last seq>`. Whether it was following still."""
        socket = self.socket
        if socket is None:
            return False
        await socket.close()
        return True
