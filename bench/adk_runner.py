"""ADK's own Runner alone: the floor under any server that runs it.

    .venv/bin/python -m bench.adk_runner [--sessions 20] [--turns 3 12 30]
        [--window 0 50] [--telemetry adk lean]

The vs_adk agent (`bench/adk_app/weather/agent.py`) on ADK's `Runner` with its
`InMemorySessionService`, in this process, on one event loop: no server, no HTTP, no
database, no streaming. Each row runs `--sessions` sessions `--turns` turns each
(the first turn of each uncounted) and prints the CPU (user + system) and wall time
per turn. Both servers in `vs_adk` run this same Runner for every turn, so what it
costs here is what neither can go below; it grows with the session's history, which
ADK copies into every model request. `--telemetry lean` runs it as Toolcrib's turns
do (agents/adk/telemetry.py: the stable GenAI semconv without message content);
`adk` leaves ADK's default, as its own server runs.
"""

import argparse
import asyncio
import resource
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
    args = parser.parse_args()
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
