"""Production under faults: many users and turns on two web processes and two
Celery workers (thread pool, concurrency 4), PostgreSQL and a Redis of the test's
own, while a worker is killed and replaced, Redis pauses, its connections are
killed, and every socket is cut.

Every turn ends (succeeded, or failed readably because its worker was killed), no
run is left queued or running, every socket holds each stored event once and in
seq order, and no HTTP answer is a 5xx. The test prints what it saw.
"""

import asyncio
import subprocess
import sys
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field

import httpx
import psycopg
import pytest
import redis

from agents.turns.queue import LOST_MESSAGE
from tests.integration import services
from tests.integration.clients import TIMEOUT, Client, Subscriber, kinds_of, seqs_of
from tests.live.server import ROOT, celery_worker, daphne

pytestmark = pytest.mark.integration

USERS = 8
TURNS = 10
# When each fault comes: after this many turns of all have ended.
KILL_WORKER_AT = 10
PAUSE_REDIS_AT = 25
KILL_CONNECTIONS_AT = 40
CUT_SOCKETS_AT = 55
PAUSE_MS = 3000
# A turn's wait: its worker killed, it ends once its lease has run out and a
# sweep found it; queued again, once the requeue time has passed.
TURN_WAIT = 120.0
LEASE = "2"


@dataclass
class Statuses:
    """Every HTTP answer the clients got, by status."""

    seen: Counter = field(default_factory=Counter)
    five_hundreds: list[str] = field(default_factory=list)

    async def record(self, response: httpx.Response) -> None:
        self.seen[response.status_code] += 1
        if response.status_code >= 500:
            await response.aread()
            self.five_hundreds.append(
                f"{response.request.method} {response.request.url.path}: "
                f"{response.status_code} {response.text[:200]}"
            )


@dataclass
class SoakClient(Client):
    statuses: Statuses | None = None

    def http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.server.url,
            headers=self.headers,
            timeout=TIMEOUT,
            event_hooks={"response": [self.statuses.record]},
        )


@dataclass
class Progress:
    """Turns ended so far, over all users; faults wait for a count."""

    ended: int = 0
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def one_more(self) -> None:
        async with self.changed:
            self.ended += 1
            self.changed.notify_all()

    async def reached(self, count: int) -> None:
        async with self.changed:
            await self.changed.wait_for(lambda: self.ended >= count)


def make_users(env: dict[str, str], names: list[str]) -> None:
    script = (
        "from django.contrib.auth.models import User\n"
        f"for name in {names!r}:\n"
        "    User.objects.filter(username=name).exists() or "
        "User.objects.create_user(name, password=name)\n"
    )
    subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", script],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )


async def one_user(
    client: SoakClient, subscriber: Subscriber, progress: Progress
) -> list[str]:
    """TURNS messages, each sent once the one before has ended; the runs' ids."""
    runs = []
    for turn in range(TURNS):
        async with client.http() as http:
            response = await http.post(
                f"/api/sessions/{subscriber.session}/messages/",
                json={"text": f"weather in city {turn}?"},
            )
        assert response.status_code == 202, response.text
        run_id = response.json()["id"]
        runs.append(run_id)
        await asyncio.wait_for(subscriber.finished[run_id].wait(), TURN_WAIT)
        await progress.one_more()
    return runs


def unfinished_runs(database_url: str) -> int:
    with psycopg.connect(database_url) as connection:
        return connection.execute(
            "SELECT count(*) FROM agents_run WHERE status IN ('queued', 'running')"
        ).fetchone()[0]


async def test_turns_survive_worker_kills_redis_faults_and_cut_sockets(
    integration_env, tmp_path
):
    with services.redis_server() as own_redis, ExitStack() as stack:
        env = {
            **integration_env,
            "REDIS_URL": own_redis.url,
            "CELERY_BROKER_URL": own_redis.url,
            "TOOLCRIB_CELERY_QUEUE": services.run_name(),
            "TOOLCRIB_RUN_LEASE": LEASE,
            "TOOLCRIB_SWEEP_SECONDS": "1",
            "LOG_LEVEL": "WARNING",
        }
        names = [f"soak{n}" for n in range(USERS)]
        await asyncio.to_thread(make_users, env, names)
        webs_and_workers = services.start_together(
            stack,
            daphne(env, tmp_path / "daphne-a.log"),
            daphne(env, tmp_path / "daphne-b.log"),
            *(
                celery_worker(
                    env, tmp_path / f"worker-{n}.log", pool="threads", concurrency=4
                )
                for n in (1, 2)
            ),
        )
        webs, workers = webs_and_workers[:2], webs_and_workers[2:]
        statuses = Statuses()
        clients = [
            SoakClient(
                server=webs[n % 2],
                token=webs[n % 2].token(name, name),
                statuses=statuses,
            )
            for n, name in enumerate(names)
        ]
        sessions = [await client.create_session("soak_weather") for client in clients]
        subscribers = [
            Subscriber(client, session)
            for client, session in zip(clients, sessions, strict=True)
        ]
        following = [
            asyncio.create_task(subscriber.follow(runs=TURNS))
            for subscriber in subscribers
        ]
        await asyncio.gather(*(subscriber.ready.wait() for subscriber in subscribers))
        progress = Progress()
        control = redis.Redis.from_url(own_redis.url)
        started = time.monotonic()
        faults: list[str] = []
        cut: list[bool] = []

        def note(fault: str) -> None:
            faults.append(f"{time.monotonic() - started:.1f}s {fault}")

        def start_another_worker() -> None:
            log = tmp_path / "worker-3.log"
            workers.append(
                stack.enter_context(
                    celery_worker(env, log, pool="threads", concurrency=4)
                )
            )
            note("another worker started")

        def kill_redis_connections() -> int:
            return sum(
                control.execute_command("CLIENT", "KILL", "TYPE", kind, "SKIPME", "yes")
                for kind in ("normal", "pubsub")
            )

        async def inject_faults() -> None:
            await progress.reached(KILL_WORKER_AT)
            await asyncio.to_thread(workers[0].kill)
            note("worker killed")
            # It starts while the turns go on (a busy machine takes a while).
            starting = asyncio.create_task(asyncio.to_thread(start_another_worker))
            await progress.reached(PAUSE_REDIS_AT)
            await asyncio.to_thread(
                control.execute_command, "CLIENT", "PAUSE", PAUSE_MS
            )
            note(f"Redis paused for {PAUSE_MS} ms")
            await progress.reached(KILL_CONNECTIONS_AT)
            note(
                f"{await asyncio.to_thread(kill_redis_connections)} Redis "
                "connections killed"
            )
            await progress.reached(CUT_SOCKETS_AT)
            cut.extend(
                await asyncio.gather(*(subscriber.cut() for subscriber in subscribers))
            )
            note(f"every socket cut ({sum(cut)} still following)")
            await starting

        injecting = asyncio.create_task(inject_faults())
        runs_by_user = await asyncio.gather(
            *(
                one_user(client, subscriber, progress)
                for client, subscriber in zip(clients, subscribers, strict=True)
            )
        )
        await asyncio.wait_for(asyncio.gather(*following), TURN_WAIT)
        await injecting
        took = time.monotonic() - started
        # After the lease: nothing left queued or running.
        await asyncio.sleep(2 * float(LEASE))
        left = await asyncio.to_thread(unfinished_runs, env["DATABASE_URL"])
        runs = [
            await client.run(run_id)
            for client, ids in zip(clients, runs_by_user, strict=True)
            for run_id in ids
        ]
        stored = [
            await client.events(session)
            for client, session in zip(clients, sessions, strict=True)
        ]
        control.close()

    outcomes = Counter(run["status"] for run in runs)
    errors = Counter(run["error"] for run in runs if run["status"] == "failed")
    requeued = sum(1 for run in runs if run.get("requeues"))
    print(
        f"\nsoak: {USERS} users x {TURNS} turns in {took:.1f}s;"
        f" outcomes {dict(outcomes)}; requeued {requeued}; failed because"
        f" {dict(errors)}; reconnects"
        f" {[subscriber.reconnects for subscriber in subscribers]};"
        f" frames {sum(len(s.frames) for s in subscribers)};"
        f" HTTP {dict(statuses.seen)}; left unfinished {left}\n  " + "\n  ".join(faults)
    )
    assert len(faults) == 5, faults
    # A socket cut while its turns went on came back (and missed nothing, below).
    assert sum(cut) >= 1
    assert all(
        subscriber.reconnects >= 1
        for subscriber, was_cut in zip(subscribers, cut, strict=True)
        if was_cut
    )
    assert statuses.five_hundreds == []
    assert set(outcomes) <= {"succeeded", "failed"}
    assert set(errors) <= {LOST_MESSAGE}  # only the killed worker's turns
    assert outcomes["failed"] <= 4  # at most its concurrency
    assert left == 0
    for subscriber, events in zip(subscribers, stored, strict=True):
        assert seqs_of(events) == list(range(1, len(events) + 1))
        assert subscriber.frames == events  # each stored event once, in order
        assert kinds_of(events).count("run_finished") == TURNS
