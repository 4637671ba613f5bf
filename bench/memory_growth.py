"""The embedded server's memory as turns add up: RSS at 0, 1,000, ... 5,000 turns.

Starts one real Daphne with the embedded defaults (SQLite, in-memory channel layer,
turns inline) on a database of its own, then drives turns of the demo
weather_sentiment agent (offline model) the way people do: `--clients` users at
once, each opening a session and its websocket, sending `--session-turns` messages
one after another (each waits for its run_finished frame), closing the socket and
opening the next session, and now and then listing its sessions (the page's
`GET /api/sessions/`). Users are bench0 ... bench<N-1>, `--users` of them, taken in
turn.

At 0 turns (after `--warmup` turns, so imports and first-use caches are in) and
every `--every` turns after, it reads the server's resident memory (VmRSS, from
/proc) and prints it with its ratio to the reading at 1,000 turns. With
`--tracemalloc`, the server runs under tracemalloc (a `sitecustomize` of the run's
own; it slows turns about threefold): at each reading it dumps a snapshot (on
SIGUSR1), and the end prints the traced memory's top growth by file and by line
between the reading at 1,000 turns and the last.

Target (issue 43): memory after 5,000 turns ≤ 1.1× that after 1,000.

    .venv/bin/python -m bench.memory_growth [--turns 5000] [--every 1000]
        [--clients 4] [--users 40] [--session-turns 10] [--warmup 20]
        [--tracemalloc] [--top 15]
"""

import argparse
import asyncio
import itertools
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import httpx
import websockets

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.turns import AGENT, MESSAGE, TURN_TIMEOUT, embedded, turn_end  # noqa: E402
from bench.vs_adk import USER, add_users  # noqa: E402
from tests.live import server as live  # noqa: E402

TARGET = 1.1
BASE = 1000  # the reading the target compares the last one with

# Loaded by every interpreter of the run at start (PYTHONPATH); in Daphne's, not
# manage.py's: tracemalloc from the first import, a snapshot written to
# SNAPSHOT_DIR/<n>.snap on each SIGUSR1.
SITECUSTOMIZE = """
import gc, itertools, os, signal, sys, tracemalloc
_count = itertools.count()
def _dump(signum, frame):
    gc.collect()
    n = next(_count)
    path = os.path.join(os.environ["BENCH_SNAPSHOT_DIR"], f"{n}.snap")
    tracemalloc.take_snapshot().dump(path + ".tmp")
    os.rename(path + ".tmp", path)
if any(arg.endswith("/daphne") for arg in sys.orig_argv):  # not manage.py's
    tracemalloc.start(int(os.environ.get("BENCH_TRACEMALLOC_FRAMES", "1")))
    signal.signal(signal.SIGUSR1, _dump)
"""


def rss_mib(pid: int) -> float:
    """Resident memory of a process, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


class Driver:
    """Turns as people take them: sessions of a few turns each, many users."""

    def __init__(self, url: str, tokens: list[str], session_turns: int) -> None:
        self.url = url
        self.ws_url = url.replace("http://", "ws://")
        self.tokens = itertools.cycle(tokens)
        self.session_turns = session_turns
        self.done = 0
        self.failed = 0

    async def run(self, turns: int, clients: int) -> None:
        """Take `turns` more turns with `clients` users at once."""
        target = self.done + turns
        await asyncio.gather(*(self._client(target) for _ in range(clients)))

    async def _client(self, target: int) -> None:
        while self.done < target:
            await self._session(next(self.tokens), target)

    async def _session(self, token: str, target: int) -> None:
        headers = {"Authorization": f"Token {token}"}
        async with httpx.AsyncClient(
            base_url=self.url, headers=headers, timeout=TURN_TIMEOUT
        ) as http:
            (await http.get("/api/sessions/")).raise_for_status()
            created = await http.post("/api/sessions/", json={"agent": AGENT})
            created.raise_for_status()
        session = created.json()["id"]
        url = f"{self.ws_url}/ws/sessions/{session}/?after=0"
        async with websockets.connect(
            url, additional_headers=headers, max_queue=None
        ) as socket:
            for _ in range(self.session_turns):
                if self.done >= target:
                    return
                self.done += 1  # claimed before the turn, so clients stop on time
                await socket.send(json.dumps({"type": "message", "text": MESSAGE}))
                try:
                    await asyncio.wait_for(turn_end(socket), TURN_TIMEOUT)
                except RuntimeError:
                    self.failed += 1


def snapshot(pid: int, folder: Path, index: int) -> tracemalloc.Snapshot:
    """Ask the server for a tracemalloc snapshot and load it."""
    path = folder / f"{index}.snap"
    subprocess.run(["kill", "-USR1", str(pid)], check=True)
    deadline = time.monotonic() + 300
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"no snapshot {path}")
        time.sleep(0.2)
    return tracemalloc.Snapshot.load(str(path))


def print_growth(before, after, top: int) -> None:
    """The traced memory's largest growth, by file and by line."""
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__)]
    before, after = before.filter_traces(ignore), after.filter_traces(ignore)
    for key in ("filename", "lineno"):
        print(f"\ntraced growth by {key}, top {top}:")
        for stat in after.compare_to(before, key)[:top]:
            frame = stat.traceback[0]
            where = frame.filename.replace(str(ROOT) + "/", "")
            if key == "lineno":
                where += f":{frame.lineno}"
            print(
                f"  {stat.size_diff / 1024:+10.0f} KiB {stat.count_diff:+8d} blocks"
                f"  {where}"
            )
    if len(after.traces) and len(after.traces[0].traceback) > 1:
        print(f"\ntraced growth by traceback, top {min(top, 8)}:")
        for stat in after.compare_to(before, "traceback")[: min(top, 8)]:
            print(f"  {stat.size_diff / 1024:+10.0f} KiB {stat.count_diff:+8d} blocks")
            for line in stat.traceback.format(most_recent_first=True):
                print(f"      {line.replace(str(ROOT) + '/', '')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--every", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--users", type=int, default=40)
    parser.add_argument("--session-turns", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--frames", type=int, default=1, help="tracemalloc depth")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        extra = {}
        if args.tracemalloc:
            live.START_TIMEOUT = 600  # Daphne's imports, traced, take minutes
            (folder / "site").mkdir()
            (folder / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
            (folder / "snaps").mkdir()
            extra = {
                "PYTHONPATH": str(folder / "site"),
                "BENCH_SNAPSHOT_DIR": str(folder / "snaps"),
                "BENCH_TRACEMALLOC_FRAMES": str(args.frames),
            }
        with embedded(folder, argparse.Namespace(), extra, add_users(args.users)) as (
            server
        ):
            tokens = [token(server.url, f"{USER}{i}") for i in range(args.users)]
            measure(server, tokens, folder / "snaps", args)


def token(url: str, username: str) -> str:
    """An API token for a bench user (patient: a traced server is slow)."""
    response = httpx.post(
        f"{url}/api/auth/token/",
        json={"username": username, "password": USER},
        timeout=TURN_TIMEOUT,
    )
    response.raise_for_status()
    return response.json()["token"]


def measure(server, tokens: list[str], snaps: Path, args) -> None:
    pid = server.process.pid
    driver = Driver(server.url, tokens, args.session_turns)
    idle = rss_mib(pid)
    asyncio.run(driver.run(args.warmup, args.clients))
    driver.done = 0
    print(
        f"{AGENT}, offline model: {args.clients} clients, {args.users} users,"
        f" {args.session_turns} turns a session; idle {idle:.0f} MiB"
        f" before {args.warmup} warm-up turns",
        flush=True,
    )
    print(f"{'turns':>6} {'RSS MiB':>8} {'× @1000':>8} {'turns/s':>8} {'failed':>6}")
    readings: dict[int, float] = {}
    snapshots = {}
    started = time.perf_counter()
    while True:
        if args.tracemalloc:
            snapshots[driver.done] = snapshot(pid, snaps, len(snapshots))
        readings[driver.done] = rss_mib(pid)
        elapsed = time.perf_counter() - started
        base = readings.get(BASE)
        ratio = f"{readings[driver.done] / base:.3f}" if base else "-"
        rate = driver.done / elapsed if driver.done else 0
        print(
            f"{driver.done:>6} {readings[driver.done]:>8.1f} {ratio:>8}"
            f" {rate:>8.1f} {driver.failed:>6}",
            flush=True,
        )
        if driver.done >= args.turns:
            break
        asyncio.run(driver.run(args.every, args.clients))
    last = max(readings)
    if BASE in readings and last > BASE:
        ratio = readings[last] / readings[BASE]
        verdict = "holds" if ratio <= TARGET else "MISSED"
        print(
            f"memory at {last} turns ÷ at {BASE}: {ratio:.3f} (target ≤ {TARGET}):"
            f" {verdict}"
        )
    if args.tracemalloc and len(snapshots) > 1:
        first = snapshots.get(BASE, snapshots[min(snapshots)])
        print_growth(first, snapshots[last], args.top)


if __name__ == "__main__":
    main()
