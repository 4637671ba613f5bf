"""Benchmark: what the execution policies add to one tool call.

Times, per call, the pieces governance's policy checks and the run wrapper add on
top of a tool's own work: reading the policy (code, settings, the Tool row's
override), validating the arguments against the schema, counting the rate limit,
and taking and releasing a concurrency slot, in the configured cache (locmem, or
Redis with REDIS_URL). Rows it makes are rolled back; its cache keys expire.

    .venv/bin/python -m bench.policies [--calls 2000]
"""

import bench.django_setup  # noqa: F401 - before any Django import

# isort: split

import statistics
import time
import uuid
from collections.abc import Awaitable, Callable

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand
from django.db import transaction
from google.adk.tools import FunctionTool

from toolsets import policies
from toolsets.catalog import declaration_of
from toolsets.governance import execution
from toolsets.governance import policies as enforcement
from toolsets.models import Tool, Toolset


class Rollback(Exception):
    """Raised to roll the benchmark's rows back."""


@policies.policy(timeout=5, max_concurrent=4, rate_limit=(1_000_000, 3600))
def set_alarm(hour: int, label: str, repeat: list[str] | None = None) -> dict:
    """Set an alarm.

    Args:
        hour: The hour.
        label: What for.
        repeat: Which days.
    """
    return {}


class Command(BaseCommand):
    help = "Time the per-call cost of execution policies (p50/p99 in ms)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--calls", type=int, default=2000)

    def handle(self, *args, calls: int, **options) -> None:
        try:
            with transaction.atomic():
                toolset = Toolset.objects.create(name=f"bench_{uuid.uuid4().hex[:8]}")
                Tool.objects.create(
                    toolset=toolset,
                    name="set_alarm",
                    full_name=f"{toolset.name}.set_alarm",
                    policy={"retries": 2},
                )
                async_to_sync(self.run)(f"{toolset.name}.set_alarm", calls)
                raise Rollback
        except Rollback:
            pass

    async def run(self, full_name: str, calls: int) -> None:
        tool = FunctionTool(set_alarm)
        schema = declaration_of(tool)[1]
        args = {"hour": 7, "label": "wake up", "repeat": ["mon", "tue"]}
        user = uuid.uuid4().hex

        async def read() -> None:
            await policies.apolicy_for(full_name, tool)

        async def validate() -> None:
            enforcement.argument_errors(schema, args)

        async def count() -> None:
            await enforcement.rate_limit_feedback(user, full_name, (1_000_000, 3600))

        async def slot() -> None:
            held = await execution.acquire_slot(full_name, 4, 1.0, 60)
            await execution.release_slot(held)

        self.stdout.write(f"{calls} calls each, p50 / p99 in ms")
        for name, piece in [
            ("read the policy (warm)", read),
            ("validate arguments", validate),
            ("rate limit count", count),
            ("take + release a slot", slot),
        ]:
            self.stdout.write(f"{name:28} {summary(await timed(piece, calls))}")


async def timed(piece: Callable[[], Awaitable[None]], calls: int) -> list[float]:
    for _ in range(min(calls, 50)):  # warm up
        await piece()
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        await piece()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"{statistics.median(ordered):.3f} / {p99:.3f}"


if __name__ == "__main__":
    import sys

    Command().run_from_argv(["manage.py", "bench_policies", *sys.argv[1:]])
