"""Stream latency: S websocket subscribers on one session while events arrive at a rate.

Starts a real Daphne server (embedded defaults: SQLite, in-memory channel layer, turns
inline; `--layer redis`: production's Redis channel layer instead) and opens S
websocket subscribers on one session. Its producer, by default, is
the `fanout` bench agent (bench/stream_producer.py): one turn whose tool records and
publishes `--rate` events a second for `--seconds` through agents.events.log's
arecord_and_publish, inside the server. With `--steps 25|100` the producer is instead a
chatty turn (2 * steps + 2 ADK events as fast as the turn makes them).

Beside it, in the same run, the raw `websockets` library: a minimal websockets server
(a process of its own, like Daphne) that broadcasts frames of the same shape and size
at the same rate to the same S clients, each JSON-encoded once (`websockets.broadcast`).

Per S and server it prints the events produced a second, the frames delivered a second
(all subscribers together) and p50/p99 latency from each event's `ts` (taken just
before it is persisted; the peer's just before it is encoded) to its receipt by a
subscriber, and the server process's CPU time (user + system) per delivered frame,
which includes recording the events in Toolcrib's case; the median over `--reps`
rounds; and how many `lagged` frames the subscribers got (a dropped doorbell,
made good from the database).

    .venv/bin/python -m bench.stream_latency [--subscribers 1 10 100] [--rate 200]
        [--seconds 5] [--reps 3] [--steps 25|100] [--no-peer] [--layer memory|redis]
"""

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import redis
import websockets

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.vs_adk import pin, process_cpu, split_cores  # noqa: E402
from tests.live.server import (  # noqa: E402
    daphne,
    free_port,
    prepare_database,
    server_env,
    stop,
    wait_for_port,
)

FINISHED = "run_finished"
REDIS_URL = "redis://127.0.0.1:6379/0"


async def subscriber(
    url: str, headers: dict, ready: asyncio.Event, kinds: set[str] | None
) -> tuple[list[float], float, int]:
    """Receipt latencies (s) of stored frames (of `kinds`, if given) until run_finished,
    when run_finished arrived, and how many `lagged` frames came."""
    latencies = []
    lagged = 0
    async with websockets.connect(
        url, additional_headers=headers, max_queue=None, max_size=None
    ) as socket:
        ready.set()
        async for raw in socket:
            received = time.time()
            frame = json.loads(raw)
            lagged += frame.get("type") == "lagged"
            if frame.get("type") != "event" or frame["seq"] is None:
                continue
            event = frame["event"]
            if kinds is None or event["kind"] in kinds:
                latencies.append(received - event["ts"])
            if event["kind"] == FINISHED:
                return latencies, received, lagged
    raise RuntimeError("the socket closed before run_finished")


async def follow(url: str, headers: dict, count: int, kinds: set[str] | None, start):
    """Open `count` subscribers, call `start()` once all are open, and gather them."""
    readies = [asyncio.Event() for _ in range(count)]
    tasks = [
        asyncio.create_task(subscriber(url, headers, ready, kinds)) for ready in readies
    ]
    await asyncio.gather(*(ready.wait() for ready in readies))
    started = time.time()
    produced = await start()
    results = await asyncio.gather(*tasks)
    latencies = sorted(value for result, _, _ in results for value in result)
    elapsed = max(finished for _, finished, _ in results) - started
    return {
        "produced_per_s": produced,
        "delivered": len(latencies),
        "frames_per_s": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[max(int(len(latencies) * 0.99) - 1, 0)] * 1000,
        "lagged": sum(lagged for _, _, lagged in results),
    }


async def toolcrib_round(server, token: str, args, count: int) -> dict:
    headers = {"Authorization": f"Token {token}"}
    agent = f"chatty_{args.steps}" if args.steps else "fanout"
    async with httpx.AsyncClient(
        base_url=server.url, headers=headers, timeout=120
    ) as http:
        created = await http.post("/api/sessions/", json={"agent": agent})
        session = created.json()["id"]
        url = f"{server.ws_url}/ws/sessions/{session}/?after=0"
        text = "go" if args.steps else f"{args.rate} {args.rate * args.seconds}"

        async def start() -> float:
            await http.post(f"/api/sessions/{session}/messages/", json={"text": text})
            return 0.0

        kinds = None if args.steps else {"state_delta"}
        row = await follow(url, headers, count, kinds, start)
        events = (await http.get(f"/api/sessions/{session}/events/")).json()
    ticks = [e["event"]["ts"] for e in events if e["event"]["kind"] == "state_delta"]
    if len(ticks) > 1:
        row["produced_per_s"] = (len(ticks) - 1) / (ticks[-1] - ticks[0])
    else:
        stored = [e["event"]["ts"] for e in events]
        row["produced_per_s"] = len(stored) / (stored[-1] - stored[0])
    return row


async def peer_round(port: int, args, count: int, template: dict) -> dict:
    """The same subscribers and frames against the raw websockets peer."""
    url = f"ws://127.0.0.1:{port}/sub"
    events = args.rate * args.seconds

    async def start() -> float:
        async with websockets.connect(f"ws://127.0.0.1:{port}/control") as control:
            message = {"rate": args.rate, "count": events, "frame": template}
            await control.send(json.dumps(message))
            return float(await control.recv())

    return await follow(url, {}, count, {"state_delta"}, start)


async def serve_peer(port: int) -> None:
    """A minimal websockets server: /sub subscribers, /control starts a burst."""
    subscribers: set = set()

    async def handler(socket) -> None:
        if socket.request.path == "/sub":
            subscribers.add(socket)
            try:
                await socket.wait_closed()
            finally:
                subscribers.discard(socket)
            return
        order = json.loads(await socket.recv())
        frame, rate = order["frame"], order["rate"]
        started = time.monotonic()
        first = time.time()
        for seq in range(1, order["count"] + 1):
            delay = started + (seq - 1) / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            frame["seq"] = seq
            frame["event"]["ts"] = time.time()
            websockets.broadcast(subscribers, json.dumps(frame))
        produced = (order["count"] - 1) / (time.time() - first)
        frame["seq"] = order["count"] + 1
        frame["event"] = {**frame["event"], "kind": FINISHED, "ts": time.time()}
        websockets.broadcast(subscribers, json.dumps(frame))
        await socket.send(str(produced))

    async with websockets.serve(handler, "127.0.0.1", port, max_queue=None):
        await asyncio.Future()


@contextlib.contextmanager
def peer_server(log: Path) -> Iterator[tuple[int, subprocess.Popen]]:
    port = free_port()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "bench.stream_latency", "--serve-peer", str(port)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for_port(port, process)
            yield port, process
        finally:
            stop(process)


async def a_frame(server, token: str) -> dict:
    """One stored tick frame of Toolcrib's, the peer's template."""
    headers = {"Authorization": f"Token {token}"}
    async with httpx.AsyncClient(
        base_url=server.url, headers=headers, timeout=120
    ) as http:
        created = await http.post("/api/sessions/", json={"agent": "fanout"})
        session = created.json()["id"]
        await http.post(f"/api/sessions/{session}/messages/", json={"text": "100 2"})
        for _ in range(100):
            events = (await http.get(f"/api/sessions/{session}/events/")).json()
            ticks = [e for e in events if e["event"]["kind"] == "state_delta"]
            if ticks:
                return ticks[0]
            await asyncio.sleep(0.1)
    raise RuntimeError("the fanout agent stored no event")


@contextlib.contextmanager
def redis_layer() -> Iterator[dict[str, str]]:
    """The machine's Redis as the channel layer, under a prefix of this run's own."""
    prefix = f"bench-stream-{os.getpid()}"
    client = redis.Redis.from_url(REDIS_URL)
    try:
        yield {"REDIS_URL": REDIS_URL, "TOOLCRIB_REDIS_PREFIX": prefix}
    finally:
        keys = list(client.scan_iter(match=f"{prefix}*", count=500))
        if keys:
            client.delete(*keys)
        client.close()


def timed(pid: int, round_) -> dict:
    """Run one round; add the server's CPU time per delivered frame (µs)."""
    before = process_cpu(pid)
    row = asyncio.run(round_)
    row["cpu_us_per_frame"] = (process_cpu(pid) - before) / row["delivered"] * 1e6
    return row


def summary(rows: list[dict]) -> dict:
    return {key: statistics.median(row[key] for row in rows) for key in rows[0]}


def print_row(name: str, count: int, row: dict) -> None:
    print(
        f"{name:<11} {count:>5} {row['produced_per_s']:>10.0f} "
        f"{row['delivered']:>10.0f} {row['frames_per_s']:>10.0f} "
        f"{row['p50_ms']:>8.1f} {row['p99_ms']:>8.1f} {row['cpu_us_per_frame']:>12.0f} "
        f"{row['lagged']:>6.0f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--rate", type=int, default=200, help="events a second")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--steps",
        type=int,
        choices=[25, 100],
        help="produce with a chatty turn of this many steps instead",
    )
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument(
        "--layer",
        choices=["memory", "redis"],
        default="memory",
        help="the channel layer: in memory (embedded) or production's Redis",
    )
    parser.add_argument("--serve-peer", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_peer:
        asyncio.run(serve_peer(args.serve_peer))
        return
    driver, servers = split_cores()
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        env = server_env(
            {
                "DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3",
                "TOOLCRIB_DATA_DIR": folder,
                "TOOLCRIB_EXTRA_AGENTS": "bench.agents.chatty_25,"
                "bench.agents.chatty_100,bench.stream_producer.fanout",
                "LOG_LEVEL": "WARNING",
                **(stack.enter_context(redis_layer()) if args.layer == "redis" else {}),
            }
        )
        prepare_database(env)
        server = stack.enter_context(daphne(env, Path(folder) / "daphne.log"))
        pids = [server.process.pid]
        peer = None
        if not args.no_peer and not args.steps:
            peer, process = stack.enter_context(peer_server(Path(folder) / "peer.log"))
            pids.append(process.pid)
        pin(pids, servers)
        os.sched_setaffinity(0, driver)
        token = server.token("alice", "alice")
        template = asyncio.run(a_frame(server, token)) if peer else None
        producer = (
            f"a chatty_{args.steps} turn"
            if args.steps
            else f"{args.rate} events/s for {args.seconds} s"
        )
        print(f"stream latency: {producer}; median of {args.reps} rounds")
        print(
            f"toolcrib: Daphne, SQLite, {args.layer} channel layer, turns inline; "
            "websockets: the raw library's broadcast"
        )
        print(f"driver on cores {sorted(driver)}, servers on {sorted(servers)}")
        print(
            f"{'server':<11} {'subs':>5} {'produced/s':>10} {'delivered':>10} "
            f"{'frames/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'CPU µs/frame':>12} "
            f"{'lagged':>6}"
        )
        for count in args.subscribers:
            ours, theirs = [], []
            for _ in range(args.reps):
                ours.append(
                    timed(
                        server.process.pid, toolcrib_round(server, token, args, count)
                    )
                )
                if peer:
                    theirs.append(
                        timed(process.pid, peer_round(peer, args, count, template))
                    )
            print_row("toolcrib", count, summary(ours))
            if peer:
                print_row("websockets", count, summary(theirs))


if __name__ == "__main__":
    main()
