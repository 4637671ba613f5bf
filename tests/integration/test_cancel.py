"""Stopping a turn that runs on a Celery worker, from a web process: the stop
crosses processes (the shared cache), the worker cancels the turn's task, the
audit says the call was cut short, and the session's next message runs."""

import asyncio
import time

import pytest

from tests.integration.clients import Client, frames_until, kinds_of
from tests.integration.test_worker_failures import wait_for_lines

pytestmark = pytest.mark.integration

# The worker looks for a stop every 0.2 s (agents.turns.stops).
STOPPED_WITHIN = 2.0


async def wait_for_call(client: Client, session: str) -> None:
    """Until the turn's slow call is stored, and so running on the worker."""
    async with asyncio.timeout(30):
        while "function_call" not in kinds_of(await client.events(session)):
            await asyncio.sleep(0.1)
    await asyncio.sleep(0.3)  # the call itself starts after its event is stored


async def test_a_turn_on_a_worker_stops_at_once_and_the_next_message_runs(cluster):
    client = Client.sign_in(cluster.webs[0], "alice")
    session = await client.create_session("kettle")
    run_id = await client.say(session, "boil the kettle")
    await wait_for_call(client, session)

    async with client.connect(session) as socket:
        started = time.monotonic()
        async with client.http() as http:
            response = await http.post(f"/api/runs/{run_id}/cancel/")
        frames = await frames_until(socket, "run_finished")
        await asyncio.to_thread(
            wait_for_lines, cluster.worker, f"turn stopped run={run_id}", 1, 10
        )
        stopped_in = time.monotonic() - started

    assert response.status_code == 200, response.text
    assert response.json()["status"] == "cancelled"
    assert frames[-1]["event"]["run"]["status"] == "cancelled"
    assert stopped_in < STOPPED_WITHIN
    async with client.http() as http:
        audit = (await http.get("/api/tool-calls/?agent=kettle")).json()
    assert [(row["run_id"], row["status"]) for row in audit] == [(run_id, "cancelled")]
    after = await client.wait_for_run(await client.say(session, "hello there"))
    assert after["status"] == "succeeded"


async def test_a_queued_run_on_a_worker_is_stopped_before_it_starts(cluster):
    client = Client.sign_in(cluster.webs[1], "bob")
    session = await client.create_session("kettle")
    running = await client.say(session, "boil the kettle")
    queued = await client.say(session, "hello there")

    async with client.http() as http:
        first = await http.post(f"/api/runs/{queued}/cancel/")
        await wait_for_call(client, session)
        second = await http.post(f"/api/runs/{running}/cancel/")

    assert (first.json()["status"], second.json()["status"]) == (
        "cancelled",
        "cancelled",
    )
    stored = await client.events(session)
    started = [
        e["event"]["run"]["id"] for e in stored if e["event"]["kind"] == "run_started"
    ]
    assert started == [running]
