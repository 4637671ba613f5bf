"""Toolcrib against ADK's own `adk api_server`, the same agent side by side.

Both servers run bench/adk_app/weather/agent.py (one user message, two tool calls,
a final answer: five events a turn, on the deterministic offline model), started
here as real processes:

- adk-memory: `adk api_server --session_service_uri memory://`;
- adk-sqlite: `adk api_server --session_service_uri sqlite:///<file>`;
- embedded: one Daphne on SQLite, in-memory channel layer, turns inline;
- embedded-notrace / embedded-otlp / embedded-otlp-traces: the same with per-run
  traces off (TOOLCRIB_TRACES=0), or on and exported over OTLP/HTTP to oteltest's
  sink (everything ADK's setup exports, or only spans); not run unless named:
  they measure tracing's cost (bench/README.md, "Tracing cost");
- production-1 / production-2: PostgreSQL + Redis, one Daphne and 1 or 2 Celery
  workers (bench/turns.py starts the Toolcrib setups);
- adk-runner: the floor, ADK's bare Runner in a process of its own with
  InMemorySessionService and no plugins, run with the RunConfig Toolcrib's turns
  use (agents.turns.runner.turn_run_config: SSE streaming, the bench agent's
  50-event window, lean telemetry): bench/adk_runner.py --serve, C sessions at
  once on one event loop, no server and no HTTP.

C clients at once, each with its own session, send N turns one after another
(after --warmup turns that are not counted): ADK over POST /run_sse, Toolcrib over
the session websocket until the turn's run_finished frame. Each Toolcrib client is
a user of its own, as ADK's are (--one-user: all of them one user, as one
automation client driving C sessions); either way Toolcrib's per-user cap
(TOOLCRIB_MAX_QUEUED_TURNS_PER_USER, 20 by default) is set to at least the
largest C on its servers, and the bench prints it, so the comparison measures
throughput, not the cap's refusals. Toolcrib's socket always
streams the answer's text in partial events; ADK's /run_sse is asked to stream it
too (`"streaming": true`), so both deliver the same events, unless
--adk-streaming off. The configurations take
turns (adk, toolcrib, adk, ...) for --reps repetitions. Prints per configuration and
C: turns/s (median of the repetitions), p50/p95/p99 latency (all repetitions'
turns), the server's CPU ms per turn (its processes and their children, from
/proc: Daphne and the Celery workers, or ADK's uvicorn; not PostgreSQL or Redis),
errors, and turns/s as a multiple of adk-sqlite's. Servers run on other cores than
this driver where the machine has more than one (--no-pin: every process on every
core, to see what the pinning costs a configuration). Under the table it judges
issue 43's targets on the run's own numbers (load_verdicts), each a line with its
value, its target and PASS or FAIL, then how many pass and the load average: ratios
of one run on one machine, never absolute milliseconds.

--history instead compares, on each configuration, turns 1-10 of a session with
turns N-9 to N of one grown to --history-turns N (server CPU ms and latency per
turn), the two measured turn about after --warmup turns of a third session, and
judges each Toolcrib configuration's growth against the 1.2x bound.

    .venv/bin/python -m bench.vs_adk [--clients 1 8 32] [--turns 30] [--reps 3]
        [--warmup 2] [--configs adk-memory adk-sqlite adk-runner embedded
        production-1 production-2] [--history [--history-turns 500]]
        [--adk-streaming on|off] [--one-user]
"""

import argparse
import asyncio
import json
import logging
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import websockets
from oteltest.sink import HttpSink
from oteltest.sink.handler import RequestHandler

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.turns import embedded, production_processes, turn_end  # noqa: E402
from tests.live.server import BIN, free_port, stop, wait_for_port  # noqa: E402

ADK_APPS = ROOT / "bench" / "adk_app"
ADK_APP = "weather"
TOOLCRIB_AGENT = "bench_weather"
USER = "bench"  # Toolcrib's users bench0, bench1, ... (password "bench")
AGENT_PATH = "bench.adk_app.weather.agent.bench_weather"
MESSAGE = "weather in london and paris?"
EVENTS_PER_TURN = 5
TURN_TIMEOUT = 120.0
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Target:
    """A running server: how to reach it and which processes are its own."""

    key: str
    kind: str  # "adk", "toolcrib" or "floor"
    url: str
    pids: list[int]
    tokens: list[str] = field(default_factory=list)  # Toolcrib: one per client
    process: subprocess.Popen | None = None  # the floor's: its levels go through it

    def cpu_seconds(self) -> float:
        """User + system CPU of the server's processes, their children included."""
        return sum(process_cpu(pid) for pid in process_tree(self.pids))

    def thread_times(self) -> dict[tuple[int, str], int]:
        """CPU of each living thread of the server's processes, in nanoseconds: for
        one turn's cost, which /proc/<pid>/stat counts in whole clock ticks (10 ms;
        a turn takes 20-40). Two readings' difference: cpu_between()."""
        return {
            (pid, tid): ns
            for pid in process_tree(self.pids)
            for tid, ns in threads_cpu(pid).items()
        }


def cpu_between(
    before: Mapping[tuple[int, str], int], after: Mapping[tuple[int, str], int]
) -> float:
    """Seconds of CPU the server's threads spent between two thread_times(),
    thread by thread: one started meanwhile counts whole; one that ended counts
    nothing (its last moments are lost; summed totals would lose its whole life,
    as a production worker's thread once took 27 ms off a turn's mean)."""
    return sum(ns - before.get(key, 0) for key, ns in after.items()) / 1e9


def process_tree(roots: Sequence[int]) -> set[int]:
    """The processes `roots` and all their living descendants."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = read_stat(int(entry))
            if stat:
                parents[int(entry)] = int(stat[1])
    tree = set(roots)
    grew = True
    while grew:
        children = {pid for pid, ppid in parents.items() if ppid in tree}
        grew = not children <= tree
        tree |= children
    return tree


def read_stat(pid: int) -> list[str]:
    """Fields of /proc/<pid>/stat after the command name (state is [0])."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    return text.rsplit(")", 1)[1].split()


def process_cpu(pid: int) -> float:
    """utime + stime + cutime + cstime of one process, in seconds."""
    stat = read_stat(pid)
    if not stat:
        return 0.0
    return sum(int(value) for value in stat[11:15]) / TICKS


def threads_cpu(pid: int) -> dict[str, int]:
    """The time on a CPU of each living thread of one process, by thread id, in
    nanoseconds (/proc/<pid>/task/<tid>/schedstat)."""
    times = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return times
    for tid in tids:
        try:
            schedstat = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text()
            times[tid] = int(schedstat.split()[0])
        except (OSError, ValueError, IndexError):
            continue  # the thread ended meanwhile
    return times


def pin(pids: Sequence[int], cores: set[int]) -> None:
    """Move every thread of these processes (and their children) onto `cores`."""
    for pid in process_tree(pids):
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                os.sched_setaffinity(int(tid), cores)
            except OSError:
                pass  # a thread that ended meanwhile


def split_cores() -> tuple[set[int], set[int]]:
    """(driver's cores, servers' cores): apart where there are two or more."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        return set(cores), set(cores)
    return {cores[0]}, set(cores[1:])


@contextmanager
def adk_server(
    folder: Path, session_uri: str
) -> Iterator[tuple[subprocess.Popen, str]]:
    """ADK's own api_server on the bench agents, until the block ends."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [
        str(BIN / "adk"),
        "api_server",
        "--host=127.0.0.1",
        f"--port={port}",
        "--no-reload",
        "--log_level=warning",
        f"--session_service_uri={session_uri}",
        "--artifact_service_uri=memory://",
        "--memory_service_uri=memory://",
        str(ADK_APPS),
    ]
    with (folder / "adk.log").open("wb") as out:
        process = subprocess.Popen(
            command, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT
        )
        try:
            wait_for_port(port, process)
            yield process, f"http://127.0.0.1:{port}"
        finally:
            stop(process)


# Toolcrib's default per-user cap (project/settings.py): the bench sets it to at
# least the largest C, so that one user's C sessions at once are not refused.
DEFAULT_PER_USER_CAP = 20


@dataclass(frozen=True)
class Setup:
    """What each configuration starts with."""

    users: int  # Toolcrib users bench0 ... bench<users-1>, one per client
    per_user_cap: int  # TOOLCRIB_MAX_QUEUED_TURNS_PER_USER on Toolcrib's servers
    one_user: bool = False  # every Toolcrib client signs in as bench0

    def toolcrib_env(self) -> dict[str, str]:
        return {"TOOLCRIB_MAX_QUEUED_TURNS_PER_USER": str(self.per_user_cap)}


def start_adk(stack: ExitStack, key: str, folder: Path, setup: Setup) -> Target:
    uri = "memory://" if key == "adk-memory" else f"sqlite:///{folder}/adk.sqlite3"
    process, url = stack.enter_context(adk_server(folder, uri))
    return Target(key=key, kind="adk", url=url, pids=[process.pid])


def start_embedded(stack: ExitStack, key: str, folder: Path, setup: Setup) -> Target:
    extra = {
        "TOOLCRIB_EXTRA_AGENTS": AGENT_PATH,
        **setup.toolcrib_env(),
        **tracing_env(stack, key),
    }
    server = stack.enter_context(
        embedded(folder, argparse.Namespace(), extra, add_users(setup.users))
    )
    return toolcrib_target(key, server, [], setup)


def tracing_env(stack: ExitStack, key: str) -> dict[str, str]:
    """The variables of an embedded config's tracing: off (TOOLCRIB_TRACES=0), on
    (the default: spans kept per run), or on and exported over OTLP/HTTP to a real
    receiver (oteltest's sink, counting what it is sent) until the bench ends."""
    if key == "embedded-notrace":
        return {"TOOLCRIB_TRACES": "0"}
    if key not in ("embedded-otlp", "embedded-otlp-traces"):
        return {}
    port = free_port()
    handler = SpanCounter()
    # oteltest's sink logs each request to stderr, between the bench's lines.
    BaseHTTPRequestHandler.log_message = lambda self, *args: None
    sink = HttpSink(handler, logging.getLogger("bench.otlp"), port=port)
    sink.start()
    stack.callback(report_spans, handler)
    stack.callback(sink.stop)
    if key == "embedded-otlp-traces":  # spans only: no metrics, no log events
        endpoint = (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            f"http://127.0.0.1:{port}/v1/traces",
        )
    else:
        endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    return {endpoint[0]: endpoint[1], "OTEL_BSP_SCHEDULE_DELAY": "500"}


class SpanCounter(RequestHandler):
    """An OTLP receiver's handler that counts the spans it is sent, keeping none."""

    def __init__(self) -> None:
        self.spans = 0

    def handle_trace(self, request, headers) -> None:
        self.spans += sum(
            len(scope.spans)
            for resource in request.resource_spans
            for scope in resource.scope_spans
        )

    def handle_metrics(self, request, headers) -> None:
        return None

    def handle_logs(self, request, headers) -> None:
        return None


def report_spans(handler: SpanCounter) -> None:
    print(f"the OTLP receiver got {handler.spans} spans")


TRACING_CONFIGS = ("embedded-notrace", "embedded-otlp", "embedded-otlp-traces")


def start_production(stack: ExitStack, key: str, folder: Path, setup: Setup) -> Target:
    workers = int(key.rsplit("-", 1)[1])
    args = argparse.Namespace(workers=workers, pool="threads", concurrency=16)
    extra = {"TOOLCRIB_EXTRA_AGENTS": AGENT_PATH, **setup.toolcrib_env()}
    server, started = stack.enter_context(
        production_processes(folder, args, extra, add_users(setup.users))
    )
    return toolcrib_target(key, server, [w.process.pid for w in started], setup)


def start_floor(stack: ExitStack, key: str, folder: Path, setup: Setup) -> Target:
    """ADK's bare Runner, configured as Toolcrib's turns (bench/adk_runner.py
    --serve), in a process of its own, until the bench ends."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with (folder / "floor.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "bench.adk_runner", "--serve"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
    stack.callback(stop, process)
    stack.callback(process.stdin.close)
    ready = process.stdout.readline().strip()
    if ready != "ready":
        raise RuntimeError(f"the floor did not start: {ready!r}, see {log.name}")
    return Target(key=key, kind="floor", url="", pids=[process.pid], process=process)


def add_users(count: int) -> Callable[[Mapping[str, str]], None]:
    """Create the users bench0 ... bench<count-1> in a Toolcrib server's database:
    one per client, as ADK's clients are each a user of their own."""
    script = (
        "from django.contrib.auth import get_user_model; "
        f"[get_user_model().objects.create_user('{USER}' + str(i), password='{USER}')"
        f" for i in range({count})]"
    )

    def prepare(env: Mapping[str, str]) -> None:
        subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", script],
            cwd=ROOT,
            env=dict(env),
            check=True,
            capture_output=True,
        )

    return prepare


def toolcrib_target(key: str, server, worker_pids: list[int], setup: Setup) -> Target:
    users = range(1 if setup.one_user else setup.users)
    tokens = [server.token(f"{USER}{i}", USER) for i in users]
    return Target(
        key=key,
        kind="toolcrib",
        url=server.url,
        pids=[server.process.pid, *worker_pids],
        tokens=tokens * setup.users if setup.one_user else tokens,
    )


CONFIGS: dict[str, tuple[str, Callable[[ExitStack, str, Path, Setup], Target]]] = {
    "adk-memory": ("ADK api_server, in-memory sessions", start_adk),
    "adk-sqlite": ("ADK api_server, SQLite sessions", start_adk),
    "adk-runner": (
        "ADK's bare Runner in process, in memory, Toolcrib's RunConfig (the floor)",
        start_floor,
    ),
    "embedded": ("Toolcrib embedded (SQLite, inline)", start_embedded),
    "embedded-notrace": (
        "Toolcrib embedded, per-run traces off (TOOLCRIB_TRACES=0)",
        start_embedded,
    ),
    "embedded-otlp": (
        "Toolcrib embedded, traces on and exported over OTLP/HTTP",
        start_embedded,
    ),
    "embedded-otlp-traces": (
        "Toolcrib embedded, only spans exported (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)",
        start_embedded,
    ),
    "production-1": (
        "Toolcrib production (PostgreSQL, Redis, 1 worker)",
        start_production,
    ),
    "production-2": (
        "Toolcrib production (PostgreSQL, Redis, 2 workers)",
        start_production,
    ),
}


class AdkClient:
    """One user of ADK's server: a session of its own, turns over /run_sse,
    streamed (the answer's text in partial events, as Toolcrib's socket gets it)
    unless `streaming` is off."""

    def __init__(self, http: httpx.AsyncClient, user: str, streaming: bool) -> None:
        self.http, self.user, self.session = http, user, ""
        self.streaming = streaming

    async def open(self) -> None:
        created = await self.http.post(f"/apps/{ADK_APP}/users/{self.user}/sessions")
        created.raise_for_status()
        self.session = created.json()["id"]

    async def turn(self) -> None:
        body = {
            "app_name": ADK_APP,
            "user_id": self.user,
            "session_id": self.session,
            "new_message": {"role": "user", "parts": [{"text": MESSAGE}]},
            "streaming": self.streaming,
        }
        events = partials = 0
        async with self.http.stream("POST", "/run_sse", json=body) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                event = json.loads(line[5:])
                if "error" in event:
                    raise RuntimeError(f"ADK error: {line[:200]}")
                if event.get("partial"):
                    partials += 1
                else:
                    events += 1
        if events != EVENTS_PER_TURN:
            raise RuntimeError(f"ADK turn had {events} events")
        if self.streaming and not partials:
            raise RuntimeError("ADK streamed no partial event")

    async def close(self) -> None:
        return None


class ToolcribClient:
    """One user of Toolcrib: a session of its own, turns over its websocket."""

    def __init__(self, target: Target, http: httpx.AsyncClient, index: int) -> None:
        self.target, self.http, self.socket = target, http, None
        self.headers = {"Authorization": f"Token {target.tokens[index]}"}

    async def open(self) -> None:
        created = await self.http.post(
            "/api/sessions/", json={"agent": TOOLCRIB_AGENT}, headers=self.headers
        )
        created.raise_for_status()
        ws_url = self.target.url.replace("http://", "ws://")
        self.socket = await websockets.connect(
            f"{ws_url}/ws/sessions/{created.json()['id']}/?after=0",
            additional_headers=self.headers,
            max_queue=None,
        )

    async def turn(self) -> None:
        await self.socket.send(json.dumps({"type": "message", "text": MESSAGE}))
        await turn_end(self.socket)

    async def close(self) -> None:
        await self.socket.close()


@dataclass
class Outcome:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0


async def timed_turns(client, turns: int, outcome: Outcome) -> None:
    """`turns` turns one after another; each one's latency, or an error."""
    for _ in range(turns):
        started = time.perf_counter()
        try:
            await asyncio.wait_for(client.turn(), TURN_TIMEOUT)
        except (
            RuntimeError,
            httpx.HTTPError,
            websockets.WebSocketException,
            TimeoutError,
        ) as error:
            outcome.errors += 1
            print(f"    error: {type(error).__name__}: {error}", file=sys.stderr)
            continue
        outcome.latencies.append(time.perf_counter() - started)


def http_client(target: Target, clients: int) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=clients + 4)
    return httpx.AsyncClient(base_url=target.url, timeout=TURN_TIMEOUT, limits=limits)


# Whether ADK's clients ask for the answer streamed (main() sets it).
ADK_STREAMING = True


def make_client(target: Target, http: httpx.AsyncClient, index: int):
    if target.kind == "adk":
        return AdkClient(http, f"user{index}", ADK_STREAMING)
    return ToolcribClient(target, http, index)


async def one_level(target: Target, clients: int, turns: int, warmup: int) -> dict:
    """C clients, warm-up turns, then `turns` timed turns each: one measurement."""
    if target.kind == "floor":
        return await floor_level(target, clients, turns, warmup)
    async with http_client(target, clients) as http:
        users = [make_client(target, http, index) for index in range(clients)]
        await asyncio.gather(*(user.open() for user in users))
        await asyncio.gather(*(timed_turns(u, warmup, Outcome()) for u in users))
        outcome = Outcome()
        cpu, started = target.cpu_seconds(), time.perf_counter()
        await asyncio.gather(*(timed_turns(u, turns, outcome) for u in users))
        elapsed = time.perf_counter() - started
        cpu = target.cpu_seconds() - cpu
        await asyncio.gather(*(user.close() for user in users))
    done = len(outcome.latencies)
    return {
        "turns_per_s": done / elapsed,
        "latencies": outcome.latencies,
        "cpu_s": cpu,
        "turns": done,
        "errors": outcome.errors,
    }


async def floor_level(target: Target, clients: int, turns: int, warmup: int) -> dict:
    """The floor's measurement of one level: the same as one_level()'s, its CPU
    that of the floor's process over the timed turns (it reads its own)."""
    target.process.stdin.write(f"{clients} {turns} {warmup}\n")
    target.process.stdin.flush()
    line = await asyncio.to_thread(target.process.stdout.readline)
    if not line:
        raise RuntimeError("the floor's process ended: see its floor.log")
    answer = json.loads(line)
    done = len(answer["latencies"])
    return {
        "turns_per_s": done / answer["elapsed"] if answer["elapsed"] else 0.0,
        "latencies": answer["latencies"],
        "cpu_s": answer["cpu_s"],
        "turns": done,
        "errors": answer["errors"],
    }


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(math.ceil(len(ordered) * share) - 1, 0)] if ordered else 0.0


def summarize(runs: Sequence[dict]) -> dict:
    latencies = [value for run in runs for value in run["latencies"]]
    turns = sum(run["turns"] for run in runs)
    return {
        "turns_per_s": statistics.median(run["turns_per_s"] for run in runs),
        "p50": percentile(latencies, 0.50) * 1000,
        "p95": percentile(latencies, 0.95) * 1000,
        "p99": percentile(latencies, 0.99) * 1000,
        "cpu_ms": sum(run["cpu_s"] for run in runs) * 1000 / max(turns, 1),
        "errors": sum(run["errors"] for run in runs),
        "turns": turns,
    }


def interleaved(keys: Sequence[str]) -> list[str]:
    """ADK and Toolcrib configurations alternating: adk, toolcrib, adk, ..."""
    adk = [key for key in keys if key.startswith("adk")]
    ours = [key for key in keys if not key.startswith("adk")]
    order = []
    for index in range(max(len(adk), len(ours))):
        order += adk[index : index + 1] + ours[index : index + 1]
    return order


def print_table(
    args: argparse.Namespace, summaries: Mapping[tuple[str, int], dict]
) -> None:
    """summarize()'s rows by (configuration, C), each with its turns/s as a multiple
    of adk-sqlite's at the same C (through _ratio: a peer whose every turn failed
    divides nothing by zero)."""
    print(
        f"\n{'configuration':<14} {'C':>3} {'turns/s':>8} {'p50 ms':>8} {'p95 ms':>8}"
        f" {'p99 ms':>8} {'CPU ms/turn':>12} {'errors':>7} {'x adk-sqlite':>13}"
    )
    for key in args.configs:
        for clients in args.clients:
            row = summaries[key, clients]
            base = summaries.get(("adk-sqlite", clients))
            ratio = (
                f"{_ratio(row['turns_per_s'], base['turns_per_s']):.2f}"
                if base
                else "-"
            )
            print(
                f"{key:<14} {clients:>3} {row['turns_per_s']:>8.1f} {row['p50']:>8.0f}"
                f" {row['p95']:>8.0f} {row['p99']:>8.0f} {row['cpu_ms']:>12.1f}"
                f" {row['errors']:>7} {ratio:>13}"
            )


# Issue 43's targets, judged on one run's own numbers: ratios, each against a
# configuration measured in the same run on the same machine.
CPU_VS_SQLITE = 0.5  # embedded server CPU a turn at most this share of adk-sqlite's
CPU_VS_FLOOR = 1.5  # ... and at most this multiple of the floor's (adk-runner)
DURABLE_CLIENTS = 1  # production-1 turns/s >= adk-sqlite's (both durable) at this C
MEMORY_FROM_CLIENTS = 8  # production-1 turns/s >= adk-memory's from this C up
P50_CLIENTS = 1  # the p50 target's C
P50_VS_MEMORY = 1.25  # production-1 p50 at most this multiple of adk-memory's
# A session's last ten turns' cost at most this multiple of its first ten's.
HISTORY_GROWTH = 1.2


@dataclass
class Verdict:
    """One target at one C: what was measured against what it must be."""

    target: str
    clients: int | None
    value: float
    bound: float
    sense: str  # "<=", ">=" or "=": how the value must stand to the bound

    @property
    def holds(self) -> bool:
        if self.sense == "<=":
            return self.value <= self.bound
        if self.sense == ">=":
            return self.value >= self.bound
        return self.value == self.bound


def load_verdicts(
    summaries: Mapping[tuple[str, int], dict], clients: Sequence[int]
) -> list[Verdict]:
    """Each load target the run's configurations can judge (summarize()'s rows by
    (configuration, C)), at each C: embedded's server CPU a turn at most 0.5x
    adk-sqlite's and at most 1.5x the floor's (adk-runner); production-1's turns/s
    at least adk-sqlite's at C = 1 and at least adk-memory's at C >= 8, its p50 at
    C = 1 at most 1.25x adk-memory's; no Toolcrib turn failed. A target whose
    configuration did not run, or whose peer finished no turn, is not judged."""
    verdicts: list[Verdict] = []

    def judge(target: str, count: int, value: float, bound: float, sense: str):
        verdicts.append(Verdict(target, count, value, bound, sense))

    for count in clients:
        rows = {key: summaries.get((key, count)) for key in CONFIGS}
        rows = {key: row for key, row in rows.items() if row}
        embedded, production = rows.get("embedded"), rows.get("production-1")
        peers = {key: row for key, row in rows.items() if row["turns"]}
        sqlite, memory = peers.get("adk-sqlite"), peers.get("adk-memory")
        floor = peers.get("adk-runner")
        if embedded and sqlite:
            ratio = _ratio(embedded["cpu_ms"], sqlite["cpu_ms"])
            judge("embedded CPU/turn x adk-sqlite's", count, ratio, CPU_VS_SQLITE, "<=")
        if embedded and floor:
            ratio = _ratio(embedded["cpu_ms"], floor["cpu_ms"])
            judge("embedded CPU/turn x the floor's", count, ratio, CPU_VS_FLOOR, "<=")
        if production and sqlite and count == DURABLE_CLIENTS:
            ratio = _ratio(production["turns_per_s"], sqlite["turns_per_s"])
            judge("production-1 turns/s x adk-sqlite's", count, ratio, 1.0, ">=")
        if production and memory and count >= MEMORY_FROM_CLIENTS:
            ratio = _ratio(production["turns_per_s"], memory["turns_per_s"])
            judge("production-1 turns/s x adk-memory's", count, ratio, 1.0, ">=")
        if production and memory and count == P50_CLIENTS:
            ratio = _ratio(production["p50"], memory["p50"])
            judge("production-1 p50 x adk-memory's", count, ratio, P50_VS_MEMORY, "<=")
        for key in ("embedded", "production-1"):
            if key in rows:
                judge(f"{key} errors", count, rows[key]["errors"], 0, "=")
    return verdicts


def _ratio(ours: float, theirs: float) -> float:
    """ours / theirs; against nothing measured (a side whose every turn failed, so
    0 turns/s and no latency), infinite, or 1 when neither measured anything."""
    if theirs:
        return ours / theirs
    return 1.0 if not ours else math.inf


def print_verdicts(verdicts: Sequence[Verdict]) -> None:
    """The targets as a table: each measured value, its target, PASS or FAIL."""
    if not verdicts:
        return
    print(f"\n{'target (issue 43)':<38} {'C':>3} {'value':>8} {'target':>9}  verdict")
    for verdict in verdicts:
        count = "-" if verdict.clients is None else verdict.clients
        bound = f"{verdict.sense} {verdict.bound:.2f}"
        value = _shown(verdict.value, verdict.bound)
        if verdict.sense == "=":  # a count: errors
            value, bound = f"{verdict.value:.0f}", f"= {verdict.bound:.0f}"
        print(
            f"{verdict.target:<38} {count:>3} {value:>8}"
            f" {bound:>9}  {'PASS' if verdict.holds else 'FAIL'}"
        )
    failed = sum(not verdict.holds for verdict in verdicts)
    print(f"{len(verdicts) - failed} of {len(verdicts)} pass", end="")
    print(f"; load {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")


def _shown(value: float, bound: float) -> str:
    """A verdict's value with two decimals, or as many more (up to four) as it takes
    not to read as its bound when it is not: 1.2026 against 1.2 is "1.203", and
    one closer still is ">1.20" or "<1.20", so a NO never prints the bound's own
    number."""
    for places in range(2, 5):
        text = f"{value:.{places}f}"
        if value == bound or float(text) != bound:
            return text
    return f"{'>' if value > bound else '<'}{bound:.2f}"


def run_load(args: argparse.Namespace, targets: dict[str, Target]) -> None:
    results: dict[tuple[str, int], list[dict]] = {}
    order = interleaved(args.configs)
    for clients in args.clients:
        for rep in range(args.reps):
            for key in order:
                run = asyncio.run(
                    one_level(targets[key], clients, args.turns, args.warmup)
                )
                results.setdefault((key, clients), []).append(run)
                print(
                    f"  C={clients} rep {rep + 1} {key}: {run['turns_per_s']:.1f}"
                    f" turns/s, {run['errors']} errors",
                    flush=True,
                )
    summaries = {key: summarize(runs) for key, runs in results.items()}
    print_table(args, summaries)
    print_verdicts(load_verdicts(summaries, args.clients))


async def one_history(target: Target, turns: int, window: int, warmup: int) -> dict:
    """CPU and latency of a session's first `window` turns and of its turns
    `turns - window + 1` to `turns`, measured in alternation.

    `warmup` turns on a session of their own come first, so the first turns pay
    for their history, not for the server's first requests (imports, caches). A
    long session is then grown to `turns - window` turns, and the two are measured
    turn about: a turn of a fresh session, then one of the long session, `window`
    times. Measured in alternation, a drift in the machine's speed meets both."""
    cpu: dict[str, list[float]] = {"first": [], "last": []}
    latencies: dict[str, list[float]] = {"first": [], "last": []}
    async with http_client(target, 3) as http:
        warming = make_client(target, http, 2)
        await warming.open()
        await timed_turns(warming, warmup, Outcome())
        await warming.close()
        long, fresh = make_client(target, http, 0), make_client(target, http, 1)
        await long.open()
        await fresh.open()
        for _ in range(turns - window):
            await asyncio.wait_for(long.turn(), TURN_TIMEOUT)
        for _ in range(window):
            for key, client in (("first", fresh), ("last", long)):
                before, started = target.thread_times(), time.perf_counter()
                await asyncio.wait_for(client.turn(), TURN_TIMEOUT)
                latencies[key].append(time.perf_counter() - started)
                cpu[key].append(cpu_between(before, target.thread_times()))
        await long.close()
        await fresh.close()
    return {
        "first_cpu": statistics.mean(cpu["first"]) * 1000,
        "last_cpu": statistics.mean(cpu["last"]) * 1000,
        "first_ms": statistics.median(latencies["first"]) * 1000,
        "last_ms": statistics.median(latencies["last"]) * 1000,
    }


def run_history(args: argparse.Namespace, targets: dict[str, Target]) -> None:
    turns, window = args.history_turns, 10
    print(
        f"\n{'configuration':<14} {'CPU ms 1-10':>12} {'CPU ms last 10':>15}"
        f" {'x':>5} {'p50 ms 1-10':>12} {'p50 ms last 10':>15} {'x':>5}"
    )
    verdicts = []
    for key in interleaved(args.configs):
        row = asyncio.run(one_history(targets[key], turns, window, args.warmup))
        verdicts += history_verdicts(key, row)
        print(
            f"{key:<14} {row['first_cpu']:>12.1f} {row['last_cpu']:>15.1f}"
            f" {_ratio(row['last_cpu'], row['first_cpu']):>5.2f}"
            f" {row['first_ms']:>12.1f} {row['last_ms']:>15.1f}"
            f" {_ratio(row['last_ms'], row['first_ms']):>5.2f}",
            flush=True,
        )
    print_verdicts(verdicts)


def history_verdicts(key: str, row: Mapping[str, float]) -> list[Verdict]:
    """A Toolcrib configuration's cost flat in session length: its last ten
    turns' CPU and p50 latency each within 1.2x of its first ten's (ADK's own cost
    grows with history, and is not judged)."""
    if key.startswith("adk"):
        return []
    verdicts = []
    for what, first, last in (
        ("CPU", "first_cpu", "last_cpu"),
        ("p50", "first_ms", "last_ms"),
    ):
        growth = _ratio(row[last], row[first])
        verdicts.append(
            Verdict(
                f"{key} {what} last 10 x first 10", None, growth, HISTORY_GROWTH, "<="
            )
        )
    return verdicts


def start_all(
    stack: ExitStack,
    folder: Path,
    keys: Sequence[str],
    setup: Setup,
    *,
    pinned: bool = True,
) -> dict:
    """Start every configuration (one after another: the machine is small).

    `pinned`: servers and driver on different cores (split_cores); otherwise every
    process may run on every core, to see what the pinning costs a configuration."""
    driver, servers = split_cores()
    if not pinned:
        driver = servers = set(os.sched_getaffinity(0))
    targets = {}
    for key in keys:
        own = folder / key
        own.mkdir()
        targets[key] = CONFIGS[key][1](stack, key, own, setup)
        pin(targets[key].pids, servers)
    os.sched_setaffinity(0, driver)
    print(f"driver on cores {sorted(driver)}, servers on {sorted(servers)}")
    return targets


def print_setup(setup: Setup, most_clients: int) -> None:
    """Who Toolcrib's clients sign in as, and the per-user cap the bench set."""
    if setup.one_user:
        who = f"one user (bench0), driving up to {most_clients} sessions at once"
    else:
        who = "a user each (bench0 ...), one session each"
    print(f"Toolcrib's clients: {who}")
    print(
        "Toolcrib's per-user cap set to TOOLCRIB_MAX_QUEUED_TURNS_PER_USER="
        f"{setup.per_user_cap} (default {DEFAULT_PER_USER_CAP}): at least the"
        " largest C, so that the run measures throughput, not the cap's"
        " too_many_turns refusals (docs/deployment.md)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--turns", type=int, default=30, help="timed turns a client")
    parser.add_argument("--warmup", type=int, default=2, help="untimed turns first")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--configs",
        nargs="+",
        choices=list(CONFIGS),
        default=[key for key in CONFIGS if key not in TRACING_CONFIGS],
    )
    parser.add_argument("--history", action="store_true")
    parser.add_argument("--history-turns", type=int, default=500)
    parser.add_argument(
        "--adk-streaming",
        choices=["on", "off"],
        default="on",
        help="ADK's /run_sse streams the answer in partial events, as Toolcrib's"
        " socket always does (on), or sends only whole events (off)",
    )
    parser.add_argument(
        "--no-pin",
        action="store_true",
        help="leave servers and driver on every core (default: apart, where the"
        " machine has two or more)",
    )
    parser.add_argument(
        "--one-user",
        action="store_true",
        help="every Toolcrib client signs in as one user (bench0), as one automation"
        " client driving C sessions at once; default: a user per client, as ADK's",
    )
    args = parser.parse_args()
    global ADK_STREAMING
    ADK_STREAMING = args.adk_streaming == "on"
    if args.history and "adk-runner" in args.configs:
        print("--history: the floor (adk-runner) is not measured by session length")
        args.configs = [key for key in args.configs if key != "adk-runner"]
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")
    print(f"ADK's answers streamed: {args.adk_streaming}")
    setup = Setup(
        users=max(*args.clients, 3 if args.history else 1),
        per_user_cap=max(DEFAULT_PER_USER_CAP, *args.clients),
        one_user=args.one_user,
    )
    print_setup(setup, max(args.clients))
    with tempfile.TemporaryDirectory() as name, ExitStack() as stack:
        targets = start_all(
            stack, Path(name), args.configs, setup, pinned=not args.no_pin
        )
        if args.history:
            run_history(args, targets)
        else:
            print(
                f"{args.turns} turns a client after {args.warmup} warm-up turns,"
                f" {args.reps} repetitions, interleaved"
            )
            run_load(args, targets)


if __name__ == "__main__":
    main()
