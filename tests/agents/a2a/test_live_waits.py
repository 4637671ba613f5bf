"""A waiting `message/stream` against a live Daphne wakes when its run ends: its
final status arrives within milliseconds of the run's end (the status's own
timestamp), on the in-memory channel layer and on Redis.

The gatekeeper agent (held_agents.py) holds its turn until the test opens the
gate; the server is a process of its own, on a migrated SQLite file.
"""

import asyncio
import json
import os
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from tests.agents.a2a.conftest import rpc, text_message
from tests.agents.a2a.held_agents import GATE_ENV, REPLY, entered
from tests.live.server import ROOT, LiveServer, daphne, prepare_database, server_env

GATEKEEPER = "tests.agents.a2a.held_agents.gatekeeper"
TIMEOUT = 30
LAYERS = {
    "in-memory": {},
    "redis": {
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "TOOLCRIB_REDIS_PREFIX": f"a2a-waits-{uuid.uuid4().hex[:8]}",
    },
}


@pytest.fixture(scope="module", params=list(LAYERS))
def gated(request, tmp_path_factory) -> Iterator[tuple[LiveServer, Path]]:
    folder = tmp_path_factory.mktemp(f"a2a-waits-{request.param}")
    gates = folder / "gates"
    gates.mkdir()
    env = server_env(
        {
            "DATABASE_URL": f"sqlite:///{folder / 'a2a.sqlite3'}",
            "TOOLCRIB_DATA_DIR": str(folder),
            "TOOLCRIB_EXTRA_AGENTS": GATEKEEPER,
            "PYTHONPATH": str(ROOT),
            GATE_ENV: str(gates / "gate"),
            **LAYERS[request.param],
        }
    )
    env.pop("CELERY_BROKER_URL", None)  # turns inline, in the server
    prepare_database(env)
    with daphne(env, folder / "daphne.log") as live:
        admin = {"Authorization": f"Token {live.token('admin', 'admin')}"}
        response = httpx.patch(
            f"{live.url}/api/agents/gatekeeper/", json={"a2a": True}, headers=admin
        )
        assert response.status_code == 200, response.text
        yield live, gates / "gate"


async def results(response: httpx.Response) -> AsyncIterator[dict]:
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            frame = json.loads(line[5:])
            assert "error" not in frame, frame
            yield frame["result"]


async def test_a_waiting_stream_ends_within_milliseconds_of_its_run(gated):
    server, gate = gated
    token = server.token("alice", "alice")
    headers = {"Authorization": f"Bearer {token}"}
    body = rpc("message/stream", text_message("open the gate"))
    seen = []
    async with httpx.AsyncClient(headers=headers, timeout=TIMEOUT) as http:
        async with http.stream("POST", f"{server.url}/a2a/gatekeeper/", json=body) as r:
            assert r.status_code == 200
            frames = results(r)
            seen.append(await anext(frames))
            deadline = time.monotonic() + TIMEOUT
            while not entered(gate).exists():
                assert time.monotonic() < deadline, "the turn never reached its tool"
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.5)  # the stream waits, woken by nothing
            gate.touch()
            async for result in frames:
                seen.append(result)
                if result.get("final"):
                    arrived = time.time()
    os.remove(gate)
    os.remove(entered(gate))

    assert seen[0]["kind"] == "task"
    final = seen[-1]
    assert (final["status"]["state"], final["final"]) == ("completed", True)
    texts = [
        p["text"]
        for r in seen
        if r["kind"] == "artifact-update"
        for p in r["artifact"]["parts"]
    ]
    assert texts == [REPLY]
    ended = datetime.fromisoformat(final["status"]["timestamp"]).timestamp()
    assert arrived - ended < 0.15, arrived - ended
