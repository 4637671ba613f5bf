"""Workers die and brokers deliver twice: a Run still runs at most once and ends."""

import asyncio
import json
import re
import time
from contextlib import ExitStack

import pytest

from agents.turns.queue import (
    LOST_CODE,
    LOST_MESSAGE,
    UNQUEUED_CODE,
    UNQUEUED_MESSAGE,
)
from tests.integration import services
from tests.integration.clients import (
    Client,
    frames_until,
    kinds_of,
    next_frame,
    seqs_of,
)
from tests.live.server import celery_worker, daphne

pytestmark = pytest.mark.integration

LOST_WITHIN = 30.0


def wait_for_lines(worker, pattern: str, count: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while len(re.findall(pattern, worker.output())) < count:
        assert time.monotonic() < deadline, f"{count} x {pattern!r} not in the log"
        time.sleep(0.1)


async def test_a_message_no_broker_takes_ends_failed_and_readable(web_without_broker):
    client = Client.sign_in(web_without_broker, "alice")
    session = await client.create_session("weather_sentiment")

    run = await client.wait_for_run(await client.say(session, "weather in oslo"))

    stored = await client.events(session)
    assert (run["status"], run["error"]) == ("failed", UNQUEUED_MESSAGE)
    assert kinds_of(stored) == ["error", "run_finished"]
    assert stored[0]["event"]["error"]["code"] == UNQUEUED_CODE


async def test_a_run_delivered_three_times_runs_once(cluster, send_turn_task):
    client = Client.sign_in(cluster.webs[0], "bob")
    session = await client.create_session("slow_weather")

    run_id = await client.say(session, "weather in oslo")
    send_turn_task(run_id)  # while the first delivery runs the turn
    send_turn_task(run_id)
    run = await client.wait_for_run(run_id)
    send_turn_task(run_id)  # after it ended
    await asyncio.to_thread(
        wait_for_lines, cluster.worker, f"turn skipped run={run_id}", 3
    )

    stored = await client.events(session)
    assert run["status"] == "succeeded"
    assert kinds_of(stored).count("run_started") == 1
    assert kinds_of(stored).count("function_call") == 1
    assert kinds_of(stored).count("run_finished") == 1
    assert seqs_of(stored) == list(range(1, len(stored) + 1))
    assert (await client.run(run_id))["status"] == "succeeded"


@pytest.mark.parametrize("broker", ["redis", "rabbitmq"])
async def test_a_worker_killed_mid_turn_fails_the_run_and_the_next_message_runs(
    broker, integration_env, tmp_path
):
    # RabbitMQ gives the killed worker's task to the other worker at once, which
    # waits out the lease and fails the run. Redis gives it back only after its
    # visibility timeout: the next message's turn finds the lease gone instead.
    queue = services.run_name()
    env = {**integration_env, "TOOLCRIB_CELERY_QUEUE": queue}
    with ExitStack() as stack:
        if broker == "rabbitmq":
            env["CELERY_BROKER_URL"] = services.require_amqp()
            stack.callback(services.delete_amqp_queue, queue)
        web, *workers = services.start_together(
            stack,
            daphne(env, tmp_path / "daphne.log"),
            celery_worker(env, tmp_path / "worker-1.log", pool="threads"),
            celery_worker(env, tmp_path / "worker-2.log", pool="threads"),
        )
        client = Client.sign_in(web, "alice")
        session = await client.create_session("slow_weather")
        async with client.connect(session) as socket:
            await socket.send(
                json.dumps({"type": "message", "text": "weather in oslo"})
            )
            ack = await next_frame(socket)
            await frames_until(socket, "function_call")
            running = [w for w in workers if "agents.execute_turn[" in w.output()]
            running[0].kill()  # mid-tool: the turn's later steps never happen
            before = await client.events(session)

            if broker == "rabbitmq":
                ending = await frames_until(socket, "run_finished", LOST_WITHIN)
            await socket.send(json.dumps({"type": "message", "text": "thanks"}))
            next_ack = await next_frame(socket)
            if broker == "redis":
                ending = await frames_until(socket, "run_finished", LOST_WITHIN)
            await frames_until(socket, "run_finished")
            failed = await client.run(ack["run"]["id"])
            succeeded = await client.run(next_ack["run"]["id"])
        stored = await client.events(session)

    assert len(running) == 1
    assert kinds_of(before) == ["run_started", "user_message", "function_call"]
    assert stored[: len(before)] == before
    assert kinds_of(ending) == ["error", "run_finished"]
    assert ending[0]["event"]["error"] == {"code": LOST_CODE, "message": LOST_MESSAGE}
    assert (failed["status"], failed["error"]) == ("failed", LOST_MESSAGE)
    assert succeeded["status"] == "succeeded"
    assert seqs_of(stored) == list(range(1, len(stored) + 1))
    assert kinds_of(stored)[len(before) + 2 :] == [
        "run_started",
        "user_message",
        "text",
        "run_finished",
    ]


async def test_a_turn_a_killed_worker_held_queued_is_queued_again_and_runs(
    integration_env, tmp_path
):
    """The Redis broker gives a killed worker's tasks back only after its visibility
    timeout (an hour): the turn it held queued, behind the session's running one,
    is queued again by the next worker's sweep, and runs there; the running one
    ends failed."""
    env = {**integration_env, "TOOLCRIB_CELERY_QUEUE": services.run_name()}
    with ExitStack() as stack:
        web, first = services.start_together(
            stack,
            daphne(env, tmp_path / "daphne.log"),
            celery_worker(
                env, tmp_path / "worker-1.log", pool="threads", concurrency=4
            ),
        )
        client = Client.sign_in(web, "bob")
        session = await client.create_session("slow_weather")
        async with client.connect(session) as socket:
            running = await client.say(session, "weather in oslo")
            await frames_until(socket, "function_call")
            waiting = await client.say(session, "weather in rome")
            # Both of the session's tasks are the first worker's: one runs, one
            # waits for it.
            await asyncio.to_thread(
                wait_for_lines, first, r"Task agents\.execute_turn\[.*\] received", 2
            )
            first.kill()
            stack.enter_context(
                celery_worker(env, tmp_path / "worker-2.log", pool="threads")
            )
            failed = await client.wait_for_run(running, LOST_WITHIN)
            ran = await client.wait_for_run(waiting, 60 + LOST_WITHIN)
        stored = await client.events(session)

    assert (failed["status"], failed["error"]) == ("failed", LOST_MESSAGE)
    assert (ran["status"], ran["requeues"]) == ("succeeded", 1)
    assert kinds_of(stored).count("run_finished") == 2
    assert seqs_of(stored) == list(range(1, len(stored) + 1))
    assert stored[-1]["event"]["run"]["requeues"] == 1
