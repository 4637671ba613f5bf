"""Events from workers reach clients of any web process, through Redis restarts."""

import asyncio
import json
from contextlib import ExitStack

import pytest

from tests.integration import services
from tests.integration.clients import (
    TIMEOUT,
    Client,
    Subscriber,
    frames_until,
    kinds_of,
    next_frame,
    seqs_of,
)
from tests.live.server import celery_worker, daphne

pytestmark = pytest.mark.integration

WEATHER_TURN = [
    "run_started",
    "user_message",
    "function_call",
    "function_response",
    "text",
    "run_finished",
]


async def test_a_workers_events_reach_a_websocket_client_through_redis(cluster):
    client = Client.sign_in(cluster.webs[0], "alice")
    session = await client.create_session("weather_sentiment")

    async with client.connect(session) as socket:
        await socket.send(json.dumps({"type": "message", "text": "weather in london?"}))
        ack = await next_frame(socket)
        frames = await frames_until(socket, "run_finished")

    stored = await client.events(session)
    assert ack["type"] == "ack"
    assert kinds_of(frames) == WEATHER_TURN
    assert seqs_of(frames) == seqs_of(stored) == list(range(1, len(WEATHER_TURN) + 1))
    assert (await client.run(ack["run"]["id"]))["status"] == "succeeded"
    assert "Task agents.execute_turn[" in cluster.worker.output()


async def test_subscribers_of_two_web_processes_each_get_every_event(cluster):
    on_a = Client.sign_in(cluster.webs[0], "alice")
    on_b = on_a.on(cluster.webs[1])
    session = await on_a.create_session("weather_sentiment")
    subscribers = [Subscriber(client, session) for client in (on_a, on_a, on_b, on_b)]
    following = [
        asyncio.create_task(subscriber.follow(runs=2)) for subscriber in subscribers
    ]
    await asyncio.gather(*(subscriber.ready.wait() for subscriber in subscribers))

    await on_b.say(session, "weather in london?")
    await on_a.say(session, "I don't like rain")
    await asyncio.wait_for(asyncio.gather(*following), TIMEOUT)

    stored = seqs_of(await on_a.events(session))
    assert stored == list(range(1, len(stored) + 1))
    assert [seqs_of(subscriber.frames) for subscriber in subscribers] == [stored] * 4
    assert [subscriber.reconnects for subscriber in subscribers] == [0] * 4


async def test_clients_replay_what_they_missed_when_redis_restarts(
    integration_env, tmp_path
):
    with services.redis_server() as redis, ExitStack() as stack:
        # The channel layer and cache on a Redis of this test's own; the broker stays.
        env = {
            **integration_env,
            "REDIS_URL": redis.url,
            "TOOLCRIB_CELERY_QUEUE": services.run_name(),
        }
        web, _ = services.start_together(
            stack,
            daphne(env, tmp_path / "daphne.log"),
            celery_worker(env, tmp_path / "worker.log"),
        )
        client = Client.sign_in(web, "alice")
        session = await client.create_session("slow_weather")
        subscribers = [Subscriber(client, session) for _ in range(2)]
        following = [
            asyncio.create_task(subscriber.follow(runs=1)) for subscriber in subscribers
        ]
        await asyncio.gather(*(subscriber.ready.wait() for subscriber in subscribers))

        run_id = await client.say(session, "weather in oslo")
        # The slow tool runs now: Redis goes away and comes back empty.
        await asyncio.wait_for(subscribers[0].seen["function_call"].wait(), TIMEOUT)
        await asyncio.to_thread(redis.restart)
        await asyncio.wait_for(asyncio.gather(*following), TIMEOUT)

        stored = await client.events(session)
        run = await client.run(run_id)
    assert run["status"] == "succeeded"
    assert kinds_of(stored)[-3:] == ["function_response", "text", "run_finished"]
    assert seqs_of(stored) == list(range(1, len(stored) + 1))
    for subscriber in subscribers:
        assert seqs_of(subscriber.frames) == seqs_of(stored)
        assert subscriber.reconnects >= 1
