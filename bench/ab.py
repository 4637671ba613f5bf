"""A/B: two checkouts (or settings) of one configuration, running at once, measured
in alternating load segments.

    .venv/bin/python -m bench.ab --config production-1 \\
        --side before=/path/to/worktree --side after=. [--clients 8] \\
        [--turns 8] [--segments 10]
    .venv/bin/python -m bench.ab --config embedded \\
        --side on=. --side off=.:TOOLCRIB_TRACES=0

Each side is a directory holding a checkout of the project, with environment
variables after a colon (`NAME=DIR:VAR=VALUE,VAR=VALUE`). Its servers are started
from that directory with its code first on the path (`git worktree add` makes one
of another commit), as vs_adk starts them (bench/vs_adk.py's CONFIGS), and run side
by side on the servers' cores, each with C clients of its own. Then the sides take
turns: each segment runs `--turns` turns a client on one side, then on the next (the
order reversed every other segment). A machine whose speed drifts during a run
(this one's does, by ±10% over minutes) moves both sides alike within a segment, so
the per-segment ratio of CPU a turn, B over A, says what the change did more
precisely than two runs taken apart: its median, least and greatest are printed,
with each side's median CPU ms a turn, turns/s, and p50/p99 latency of all its turns.

Sessions grow through the segments, so ADK's own servers (which read a session's
every event) get costlier as the run goes on: compare Toolcrib with Toolcrib here,
and Toolcrib with ADK in vs_adk.
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Side:
    name: str
    folder: Path
    env: dict[str, str]


def parse_side(text: str) -> Side:
    name, _, rest = text.partition("=")
    folder, _, variables = rest.partition(":")
    env = dict(pair.split("=", 1) for pair in variables.split(",") if pair)
    return Side(name, Path(folder or ".").resolve(), env)


def hold(config: str, users: int) -> None:
    """In a side's process: start the configuration, print its target, hold it."""
    from bench import vs_adk

    with tempfile.TemporaryDirectory() as name, ExitStack() as stack:
        # A side's own vs_adk: from issue 43 on it takes a Setup (users and the
        # per-user cap), before that the number of users.
        setup = (
            vs_adk.Setup(users=users, per_user_cap=max(users, 20))
            if hasattr(vs_adk, "Setup")
            else users
        )
        target = vs_adk.start_all(stack, Path(name), [config], setup)[config]
        fields = ("key", "kind", "url", "pids", "tokens")
        print(json.dumps({field: getattr(target, field) for field in fields}))
        sys.stdout.flush()
        sys.stdin.read()  # until the driver closes it


def start(side: Side, config: str, users: int) -> tuple[subprocess.Popen, dict]:
    path = [str(side.folder), *filter(None, [side.env.get("PYTHONPATH")])]
    env = {**os.environ, **side.env, "PYTHONPATH": os.pathsep.join(path)}
    process = subprocess.Popen(
        # This file, run with the side's checkout first on the path: its servers
        # and its bench.vs_adk, which may predate this file.
        [sys.executable, __file__, "--hold", config, str(users)],
        cwd=side.folder,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    for line in process.stdout:
        if line.startswith("{"):
            return process, json.loads(line)
    raise SystemExit(f"side {side.name} did not start (see its output above)")


async def measure(args: argparse.Namespace, targets: dict) -> dict:
    from bench import vs_adk

    clients = {}
    for name, target in targets.items():
        http = vs_adk.http_client(target, args.clients)
        users = [vs_adk.make_client(target, http, i) for i in range(args.clients)]
        await asyncio.gather(*(user.open() for user in users))
        await asyncio.gather(
            *(vs_adk.timed_turns(user, args.warmup, vs_adk.Outcome()) for user in users)
        )
        clients[name] = (http, users)
    results = {name: {"cpu": [], "rate": [], "latencies": []} for name in targets}
    names = list(targets)
    for segment in range(args.segments):
        for name in names if segment % 2 == 0 else names[::-1]:
            target, (_, users) = targets[name], clients[name]
            outcome = vs_adk.Outcome()
            cpu, started = target.cpu_seconds(), time.perf_counter()
            await asyncio.gather(
                *(vs_adk.timed_turns(user, args.turns, outcome) for user in users)
            )
            elapsed, cpu = time.perf_counter() - started, target.cpu_seconds() - cpu
            done = max(len(outcome.latencies), 1)
            results[name]["cpu"].append(1000 * cpu / done)
            results[name]["rate"].append(done / elapsed)
            results[name]["latencies"] += outcome.latencies
    for http, users in clients.values():
        await asyncio.gather(*(user.close() for user in users))
        await http.aclose()
    return results


def report(results: dict) -> None:
    from bench.vs_adk import percentile

    for name, row in results.items():
        print(
            f"{name:>12}  CPU ms/turn {statistics.median(row['cpu']):6.2f}"
            f"  turns/s {statistics.median(row['rate']):6.1f}"
            f"  p50 {1000 * percentile(row['latencies'], 0.5):6.0f} ms"
            f"  p99 {1000 * percentile(row['latencies'], 0.99):6.0f} ms"
        )
    base, *others = results
    for name in others:
        ratios = [
            b / a
            for a, b in zip(results[base]["cpu"], results[name]["cpu"], strict=True)
        ]
        print(
            f"{name} / {base}: CPU a turn x{statistics.median(ratios):.3f}"
            f" (segments: {min(ratios):.3f} to {max(ratios):.3f})"
        )


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--hold":
        hold(sys.argv[2], int(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="embedded")
    parser.add_argument("--side", action="append", required=True, type=parse_side)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--turns", type=int, default=8, help="a client's, a segment")
    parser.add_argument("--segments", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} (1 min); {args.config}, C = {args.clients}")
    processes, targets = [], {}
    try:
        from bench import vs_adk

        for side in args.side:
            process, fields = start(side, args.config, args.clients)
            processes.append(process)
            targets[side.name] = vs_adk.Target(**fields)
        driver, _servers = vs_adk.split_cores()
        os.sched_setaffinity(0, driver)
        report(asyncio.run(measure(args, targets)))
    finally:
        for process in processes:
            process.stdin.close()
        for process in processes:
            process.wait()


if __name__ == "__main__":
    main()
