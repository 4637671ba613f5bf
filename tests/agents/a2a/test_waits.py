"""A caller waiting on an A2A task is woken by its session's doorbell: no query
while nothing happens, the task read again as soon as the run moves; with the
channel layer away, it reads the task now and then, and still sees it end."""

import asyncio
import logging
import time
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.db.backends import utils as db_utils

from agents.a2a import waits
from agents.adk.builder import sync_code_agents
from agents.models import A2ATask, AgentSpec, Run
from tests.agents.a2a import held_agents
from tests.agents.a2a.conftest import rpc, sse_results, text_message

pytestmark = pytest.mark.django_db(transaction=True)

GATEKEEPER = "tests.agents.a2a.held_agents.gatekeeper"
TIMEOUT = 15
# Redis on a port nobody listens on: the channel layer is away.
AWAY = {
    "default": {
        "BACKEND": "project.patches.redis_layer.RedisChannelLayer",
        "CONFIG": {"hosts": ["redis://127.0.0.1:9"]},
    }
}


@pytest.fixture
def gate(tmp_path, monkeypatch, settings, db) -> Path:
    """The gatekeeper served over A2A, its gate closed."""
    settings.TOOLCRIB_AGENTS = [*settings.TOOLCRIB_AGENTS, GATEKEEPER]
    sync_code_agents()
    AgentSpec.objects.filter(name="gatekeeper").update(a2a=True)
    path = tmp_path / "gate"
    monkeypatch.setenv(held_agents.GATE_ENV, str(path))
    return path


@pytest.fixture
def queries(monkeypatch):
    """Every SQL statement this process runs, on any thread."""
    seen: list[str] = []
    original = db_utils.CursorWrapper._execute_with_wrappers

    def counted(self, sql, *args, **kwargs):
        seen.append(sql)
        return original(self, sql, *args, **kwargs)

    monkeypatch.setattr(db_utils.CursorWrapper, "_execute_with_wrappers", counted)
    return seen


async def until(check, *, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not await sync_to_async(check)():
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.01)


def stream(client) -> asyncio.Task:
    body = rpc("message/stream", text_message("open the gate"))
    return asyncio.ensure_future(client.post("/a2a/gatekeeper/", json=body))


def tasks_of_gatekeeper():
    return A2ATask.objects.filter(session__agent__name="gatekeeper")


def finished_at() -> float:
    run = Run.objects.filter(session__agent__name="gatekeeper").latest("created_at")
    assert run.status == Run.Status.SUCCEEDED, run.status
    return run.finished_at.timestamp()


async def test_a_waiting_stream_reads_nothing_until_its_run_moves_then_wakes(
    gate, a2a_client, alice, token_of, queries
):
    token = await sync_to_async(token_of)(alice)
    async with a2a_client(token) as client:
        streamed = stream(client)
        await until(held_agents.entered(gate).exists)
        await asyncio.sleep(0.3)  # what the call's start rang is read by now

        queries.clear()
        await asyncio.sleep(1.0)
        quiet = list(queries)
        gate.touch()
        response = await asyncio.wait_for(streamed, TIMEOUT)
        arrived = time.time()

    # Five reads a second, each several queries, when it polled.
    assert quiet == []
    results = sse_results(response.text)
    assert results[-1]["status"]["state"] == "completed"
    assert results[-1]["final"] is True
    chunks = [r for r in results if r["kind"] == "artifact-update"]
    assert [p["text"] for c in chunks for p in c["artifact"]["parts"]] == [
        held_agents.REPLY
    ]
    # Woken by the run's end: its stream ends within milliseconds of it.
    lag = arrived - await sync_to_async(finished_at)()
    assert lag < 0.15, lag


async def test_many_streams_of_one_session_wait_on_one_relay_and_all_wake(
    gate, a2a_client, alice, token_of
):
    # Each waiting stream holds an asyncio.Event, not a thread: a hundred readers
    # of one task, all woken by the one doorbell of its end.
    token = await sync_to_async(token_of)(alice)
    async with a2a_client(token) as client:
        first = stream(client)
        await until(held_agents.entered(gate).exists)
        await until(tasks_of_gatekeeper().exists)
        task_id = str((await tasks_of_gatekeeper().aget()).pk)
        body = rpc("tasks/resubscribe", {"id": task_id})
        others = [
            asyncio.ensure_future(client.post("/a2a/gatekeeper/", json=body))
            for _ in range(20)
        ]
        await asyncio.sleep(0.5)
        gate.touch()
        responses = await asyncio.wait_for(asyncio.gather(first, *others), TIMEOUT)

    for response in responses:
        assert sse_results(response.text)[-1]["status"]["state"] == "completed"


async def test_with_the_channel_layer_away_a_stream_reads_now_and_then_and_ends(
    gate, a2a_client, alice, token_of, settings, monkeypatch, caplog
):
    settings.CHANNEL_LAYERS = AWAY
    monkeypatch.setattr(waits, "FALLBACK_SECONDS", 0.5)
    token = await sync_to_async(token_of)(alice)
    with caplog.at_level(logging.WARNING, logger="agents.a2a.waits"):
        async with a2a_client(token) as client:
            streamed = stream(client)
            await until(held_agents.entered(gate).exists)
            gate.touch()
            response = await asyncio.wait_for(streamed, TIMEOUT)

    results = sse_results(response.text)
    assert results[-1]["status"]["state"] == "completed"
    assert any("doorbell unavailable" in r.getMessage() for r in caplog.records)
