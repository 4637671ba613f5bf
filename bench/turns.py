"""Turn throughput: C concurrent users, each running T turns of weather_sentiment.

The demo agent on the offline model (a tool call, its result, an answer: six stored
events a turn), in two setups started here as real processes:
- embedded: the defaults, one Daphne (SQLite, in-memory layer, turns inline);
- production: PostgreSQL + Redis, one Daphne and W Celery workers (a database and
  a Redis prefix of the benchmark's own, dropped at the end).

Each user has a session and a websocket, sends a message frame, and waits for its
turn's run_finished frame before the next message. Prints, per setup and C, the
turns per second (all users, wall clock) and p50/p99 turn latency (message sent to
run_finished received).

    .venv/bin/python -m bench.turns [--users 1 8 32] [--turns 5]
        [--setups embedded production] [--workers 2] [--pool threads]
        [--concurrency 16]
"""

import argparse
import asyncio
import json
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import websockets

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integration import services  # noqa: E402
from tests.live.server import (  # noqa: E402
    LiveServer,
    Worker,
    celery_worker,
    daphne,
    prepare_database,
    server_env,
)

AGENT = "weather_sentiment"
MESSAGE = "weather in london?"
TURN_TIMEOUT = 120.0


async def user_turns(server: LiveServer, token: str, turns: int) -> list[float]:
    """One user: a session, a socket, `turns` turns one after another; latencies."""
    headers = {"Authorization": f"Token {token}"}
    async with httpx.AsyncClient(
        base_url=server.url, headers=headers, timeout=TURN_TIMEOUT
    ) as http:
        created = await http.post("/api/sessions/", json={"agent": AGENT})
    url = f"{server.ws_url}/ws/sessions/{created.json()['id']}/?after=0"
    latencies = []
    async with websockets.connect(
        url, additional_headers=headers, max_queue=None
    ) as socket:
        for _ in range(turns):
            started = time.perf_counter()
            await socket.send(json.dumps({"type": "message", "text": MESSAGE}))
            await asyncio.wait_for(turn_end(socket), TURN_TIMEOUT)
            latencies.append(time.perf_counter() - started)
    return latencies


async def turn_end(socket) -> None:
    """Read frames until the run this socket started has finished."""
    run_id = None
    async for raw in socket:
        frame = json.loads(raw)
        if frame["type"] == "ack":
            run_id = frame["run"]["id"]
        elif frame["type"] == "error":
            raise RuntimeError(f"refused: {frame['error']}")
        elif frame["type"] == "event" and frame["event"]["kind"] == "run_finished":
            run = frame["event"]["run"]
            if run["id"] == run_id:
                if run["status"] != "succeeded":
                    raise RuntimeError(f"turn failed: {run['error']}")
                return


async def one_level(server: LiveServer, token: str, users: int, turns: int) -> dict:
    started = time.perf_counter()
    results = await asyncio.gather(
        *(user_turns(server, token, turns) for _ in range(users))
    )
    elapsed = time.perf_counter() - started
    latencies = sorted(value for result in results for value in result)
    return {
        "users": users,
        "turns": len(latencies),
        "turns_per_s": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[math.ceil(len(latencies) * 0.99) - 1] * 1000,
    }


@contextmanager
def embedded(
    folder: Path,
    args: argparse.Namespace,
    extra: Mapping[str, str] | None = None,
    prepare: Callable[[Mapping[str, str]], None] | None = None,
) -> Iterator[LiveServer]:
    """One Daphne on SQLite, turns inline; `extra` adds to its environment and
    `prepare(env)` runs once its database is ready, before it starts."""
    env = server_env(
        {
            "DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3",
            "TOOLCRIB_DATA_DIR": str(folder),
            "LOG_LEVEL": "WARNING",
            **(extra or {}),
        }
    )
    for name in ("REDIS_URL", "CELERY_BROKER_URL"):
        env.pop(name, None)
    prepare_database(env)
    if prepare is not None:
        prepare(env)
    with daphne(env, folder / "daphne.log") as server:
        yield server


@contextmanager
def production_processes(
    folder: Path,
    args: argparse.Namespace,
    extra: Mapping[str, str] | None = None,
    prepare: Callable[[Mapping[str, str]], None] | None = None,
) -> Iterator[tuple[LiveServer, list[Worker]]]:
    """PostgreSQL + Redis: the Daphne and the args.workers Celery workers (see
    embedded() for `extra` and `prepare`)."""
    name = services.run_name().replace("toolcrib_it_", "toolcrib_bench_")
    with (
        services.postgres_database(name) as database_url,
        services.redis_prefix(name) as redis_url,
        ExitStack() as stack,
    ):
        env = server_env(
            {
                "DATABASE_URL": database_url,
                "REDIS_URL": redis_url,
                "CELERY_BROKER_URL": redis_url,
                "TOOLCRIB_REDIS_PREFIX": name,
                "TOOLCRIB_CELERY_QUEUE": name,
                "TOOLCRIB_DATA_DIR": str(folder),
                "LOG_LEVEL": "WARNING",
                **(extra or {}),
            }
        )
        prepare_database(env)
        if prepare is not None:
            prepare(env)
        workers = [
            celery_worker(
                env,
                folder / f"worker-{index}.log",
                pool=args.pool,
                concurrency=args.concurrency,
            )
            for index in range(args.workers)
        ]
        server, *started = services.start_together(
            stack, daphne(env, folder / "daphne.log"), *workers
        )
        yield server, started


@contextmanager
def production(
    folder: Path, args: argparse.Namespace, extra: Mapping[str, str] | None = None
) -> Iterator[LiveServer]:
    """PostgreSQL + Redis, one Daphne and args.workers Celery workers."""
    with production_processes(folder, args, extra) as (server, _workers):
        yield server


SETUPS = {
    "embedded": ("embedded (SQLite, in-memory layer, inline)", embedded),
    "production": ("production (PostgreSQL, Redis, {workers} workers)", production),
}


def run_setup(key: str, args: argparse.Namespace) -> None:
    label, start = SETUPS[key]
    with tempfile.TemporaryDirectory() as folder, start(Path(folder), args) as server:
        token = server.token("alice", "alice")
        # Warm-up: every process imports and builds what a first turn needs.
        asyncio.run(one_level(server, token, max(args.workers, 1) * 2, 1))
        print(label.format(workers=args.workers), flush=True)
        for users in args.users:
            row = asyncio.run(one_level(server, token, users, args.turns))
            print(
                f"  {row['users']:>5} {row['turns']:>6} {row['turns_per_s']:>8.1f}"
                f" {row['p50_ms']:>8.0f} {row['p99_ms']:>8.0f}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--turns", type=int, default=3, help="turns per user")
    parser.add_argument(
        "--setups", nargs="+", choices=list(SETUPS), default=list(SETUPS)
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--pool", choices=["threads", "solo", "prefork"], default="threads"
    )
    parser.add_argument(
        "--concurrency", type=int, default=16, help="turns at once per worker"
    )
    args = parser.parse_args()
    print(f"{AGENT} on the offline model, {args.turns} turns per user")
    print(f"  {'users':>5} {'turns':>6} {'turns/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for key in args.setups:
        run_setup(key, args)


if __name__ == "__main__":
    main()
