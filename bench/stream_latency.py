"""Stream latency: S subscribers on one session whose turn produces N events.

Starts a real Daphne server (embedded defaults: SQLite, in-memory channel layer, turns
inline), opens S websocket subscribers on one session, runs one turn and prints, per S,
the events/s delivered (all subscribers together) and p50/p99 latency from the event's
timestamp (taken just before it is persisted) to its receipt by a subscriber.

    .venv/bin/python -m bench.stream_latency [--subscribers 1 10 100] [--steps 25]
"""

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import websockets

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.live.server import daphne, prepare_database, server_env  # noqa: E402


async def subscriber(
    url: str, headers: dict, ready: asyncio.Event, done: list
) -> list[float]:
    """Collect receipt latencies (seconds) of stored frames until run_finished."""
    latencies = []
    async with websockets.connect(
        url, additional_headers=headers, max_queue=None
    ) as socket:
        ready.set()
        async for raw in socket:
            received = time.time()
            frame = json.loads(raw)
            if frame.get("type") != "event" or frame["seq"] is None:
                continue
            latencies.append(received - frame["event"]["ts"])
            if frame["event"]["kind"] == "run_finished":
                done.append(received)
                return latencies
    return latencies


async def one_round(server, token: str, agent: str, count: int) -> dict:
    headers = {"Authorization": f"Token {token}"}
    async with httpx.AsyncClient(
        base_url=server.url, headers=headers, timeout=120
    ) as http:
        session = (await http.post("/api/sessions/", json={"agent": agent})).json()[
            "id"
        ]
        url = f"{server.ws_url}/ws/sessions/{session}/?after=0"
        readies = [asyncio.Event() for _ in range(count)]
        done: list[float] = []
        tasks = [
            asyncio.create_task(subscriber(url, headers, r, done)) for r in readies
        ]
        await asyncio.gather(*(r.wait() for r in readies))
        started = time.time()
        await http.post(f"/api/sessions/{session}/messages/", json={"text": "go"})
        results = await asyncio.gather(*tasks)
    latencies = sorted(value for result in results for value in result)
    elapsed = max(done) - started
    return {
        "subscribers": count,
        "events": len(results[0]),
        "delivered": len(latencies),
        "events_per_s": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--steps", type=int, choices=[25, 100], default=25)
    args = parser.parse_args()
    agent = f"chatty_{args.steps}"
    with tempfile.TemporaryDirectory() as folder:
        env = server_env(
            {
                "DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3",
                "TOOLCRIB_DATA_DIR": folder,
                "TOOLCRIB_EXTRA_AGENTS": "bench.agents.chatty_25,bench.agents.chatty_100",
                "LOG_LEVEL": "WARNING",
            }
        )
        prepare_database(env)
        with daphne(env, Path(folder) / "daphne.log") as server:
            token = server.token("alice", "alice")
            print(
                f"stream latency, agent {agent}, embedded defaults (SQLite, in-memory layer)"
            )
            print(
                f"{'subs':>5} {'events':>7} {'delivered':>10} {'events/s':>10} {'p50 ms':>8} {'p99 ms':>8}"
            )
            for count in args.subscribers:
                row = asyncio.run(one_round(server, token, agent, count))
                print(
                    f"{row['subscribers']:>5} {row['events']:>7} {row['delivered']:>10} "
                    f"{row['events_per_s']:>10.0f} {row['p50_ms']:>8.1f} {row['p99_ms']:>8.1f}"
                )


if __name__ == "__main__":
    main()
