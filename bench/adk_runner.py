"""ADK's own Runner alone: the floor under any server that runs it.

    .venv/bin/python -m bench.adk_runner [--sessions 20] [--turns 3 12 30]
        [--window 0 50] [--telemetry adk lean]
    .venv/bin/python -m bench.adk_runner --serve   # bench.vs_adk's floor

The vs_adk agent (`bench/adk_app/weather/agent.py`) on ADK's `Runner` with its
`InMemorySessionService`, in this process, on one event loop: no server, no HTTP, no
database, no streaming. Each row runs `--sessions` sessions `--turns` turns each
(the first turn of each uncounted) and prints the CPU (user + system) and wall time
per turn. Both servers in `vs_adk` run this same Runner for every turn, so what it
costs here is what neither can go below; it grows with the session's history, which
ADK copies into every model request. `--telemetry lean` runs it as Toolcrib's turns
do (agents/adk/telemetry.py: the stable GenAI semconv without message content);
`adk` leaves ADK's default, as its own server runs.

`--serve` is the floor `bench.vs_adk` measures in the same run as the servers
(its `adk-runner` configuration): ADK's bare Runner, no plugins, on
`InMemorySessionService`, run exactly as Toolcrib runs a turn's Runner otherwise:
the RunConfig of `agents.turns.runner.turn_run_config` (the answer streamed over
SSE, the tools' thread pool, lean telemetry) with the bench agent's event window
(`HISTORY_DEFAULT` events), and the user's message yielded. No tracer provider is
set, so its spans record nothing (Toolcrib's per-run traces are Toolcrib's own
work). It reads lines `<clients> <turns> <warmup>` on standard input and answers
each with one JSON line: C sessions at once on one event loop, each `warmup`
uncounted turns then `turns` timed ones, one after another, as vs_adk's clients
run theirs; the timed turns' latencies, errors, wall time and the process's CPU.
"""

import argparse
import asyncio
import json
import resource
import sys
import time

import bench.django_setup  # noqa: F401 - Django set up: the agent module imports the app


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def measure(
    *, sessions: int, turns: int, window: int | None, lean: bool = False
) -> tuple[int, float, float]:
    """(turns counted, CPU ms a turn, turns a second)."""
    from google.adk.agents.run_config import RunConfig
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.adk.sessions.base_session_service import GetSessionConfig
    from google.genai import types

    from agents.adk.telemetry import LEAN
    from bench.adk_app.weather.agent import MESSAGE, bench_weather

    service = InMemorySessionService()
    runner = Runner(app_name="weather", agent=bench_weather, session_service=service)
    message = types.Content(role="user", parts=[types.Part(text=MESSAGE)])
    # ADK's own recent-events window, as Toolcrib's agents' `history` sets it.
    config = RunConfig(
        get_session_config=GetSessionConfig(num_recent_events=window)
        if window
        else None,
        telemetry=LEAN if lean else None,
    )
    users = []
    for n in range(sessions):
        session = await service.create_session(app_name="weather", user_id=f"u{n}")
        users.append((f"u{n}", session.id))

    async def turn(user_id: str, session_id: str) -> None:
        async for _ in runner.run_async(
            user_id=user_id,
            session_id=session_id,
            new_message=message,
            run_config=config,
        ):
            pass

    for user_id, session_id in users:  # warm-up: imports, caches
        await turn(user_id, session_id)
    cpu, wall, counted = cpu_seconds(), time.perf_counter(), 0
    for _ in range(turns - 1):
        for user_id, session_id in users:
            await turn(user_id, session_id)
            counted += 1
    cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
    return counted, 1000 * cpu / counted, counted / wall


class Floor:
    """ADK's bare Runner on the bench agent, configured as Toolcrib's turns run it."""

    def __init__(self) -> None:
        from google.adk.apps import App
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.genai import types

        from agents.adk import history
        from agents.models import HISTORY_DEFAULT
        from agents.turns.runner import turn_run_config
        from bench.adk_app.weather.agent import MESSAGE, bench_weather

        self.service = InMemorySessionService()
        app = App(name="weather", root_agent=bench_weather, plugins=[])
        self.runner = Runner(app=app, session_service=self.service)
        self.config = turn_run_config(window=history.window(events=HISTORY_DEFAULT))
        self.message = types.Content(role="user", parts=[types.Part(text=MESSAGE)])
        self.sessions = 0

    async def open(self) -> tuple[str, str]:
        """A new session of a user of its own: (user id, session id)."""
        self.sessions += 1
        user_id = f"floor{self.sessions}"
        session = await self.service.create_session(app_name="weather", user_id=user_id)
        return user_id, session.id

    async def turn(self, user_id: str, session_id: str) -> None:
        async for _ in self.runner.run_async(
            user_id=user_id,
            session_id=session_id,
            new_message=self.message,
            run_config=self.config,
            yield_user_message=True,
        ):
            pass

    async def level(self, clients: int, turns: int, warmup: int) -> dict:
        """C sessions at once: `warmup` turns each, then `turns` timed turns each."""
        users = [await self.open() for _ in range(clients)]
        latencies: list[float] = []
        errors = 0

        async def run(user: tuple[str, str], count: int, timed: bool) -> None:
            nonlocal errors
            for _ in range(count):
                started = time.perf_counter()
                try:
                    await self.turn(*user)
                except Exception as error:  # noqa: BLE001 - counted, as vs_adk counts
                    errors += 1
                    print(f"floor turn failed: {error!r}", file=sys.stderr)
                    continue
                if timed:
                    latencies.append(time.perf_counter() - started)

        await asyncio.gather(*(run(user, warmup, False) for user in users))
        errors = 0
        cpu, wall = cpu_seconds(), time.perf_counter()
        await asyncio.gather(*(run(user, turns, True) for user in users))
        return {
            "latencies": latencies,
            "errors": errors,
            "elapsed": time.perf_counter() - wall,
            "cpu_s": cpu_seconds() - cpu,
        }


async def serve() -> None:
    """bench.vs_adk's floor: a level per line of standard input (see above), all
    on one event loop, as a server's."""
    floor = Floor()
    loop = asyncio.get_running_loop()
    print("ready", flush=True)
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        clients, turns, warmup = (int(value) for value in line.split())
        answer = await floor.level(clients, turns, warmup)
        print(json.dumps(answer), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--turns", type=int, nargs="+", default=[3, 12, 30])
    parser.add_argument(
        "--window",
        type=int,
        nargs="+",
        default=[0, 50],
        help="recent events read a turn (0: all, ADK's server's default; 50: Toolcrib's)",
    )
    parser.add_argument(
        "--telemetry",
        nargs="+",
        choices=["adk", "lean"],
        default=["adk", "lean"],
        help="ADK's default telemetry, or Toolcrib's turns' (agents/adk/telemetry.py)",
    )
    parser.add_argument(
        "--serve", action="store_true", help="bench.vs_adk's floor (see above)"
    )
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve())
        return
    print("ADK Runner alone (InMemorySessionService, one loop, no server)")
    print(
        f"{'telemetry':>9} {'window':>7} {'turns a session':>16}"
        f" {'events at the end':>18} {'CPU ms/turn':>12} {'turns/s':>8}"
    )
    for telemetry in args.telemetry:
        for window in args.window:
            for turns in args.turns:
                _, cpu_ms, rate = asyncio.run(
                    measure(
                        sessions=args.sessions,
                        turns=turns,
                        window=window or None,
                        lean=telemetry == "lean",
                    )
                )
                shown = window or "all"
                print(
                    f"{telemetry:>9} {shown:>7} {turns:>16} {6 * turns:>18}"
                    f" {cpu_ms:>12.1f} {rate:>8.1f}"
                )


if __name__ == "__main__":
    main()
