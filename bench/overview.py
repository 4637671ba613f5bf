"""Benchmark: the Overview over 50,000 tool calls, before and after the server
aggregated them.

Builds 50,000 audit rows (ToolCall) over the last 30 days, 40 tools, 50 users,
every status, inside a transaction that is rolled back, then times, as a signed-in
staff member, what the Overview page asks for each range:

- before: every row, `/api/tool-calls/?since=...&limit=50000`, which the page then
  parsed and counted in the browser (that time is not included: it comes on top);
- after: `/api/tool-calls/summary/?since=...&bucket=...`, the numbers alone, read
  from the hourly totals kept as calls are audited (toolsets/call_totals.py).

Prints p50 and the response size for both.

    .venv/bin/python -m bench.overview [--rounds 5] [--calls 50000]
"""

import bench.django_setup  # noqa: F401 - before any Django import

# isort: split

import random
import statistics
import time
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.test import Client, override_settings
from django.utils import timezone

from toolsets.call_totals import count_all
from toolsets.models import ToolCall

USERS, TOOLS = 50, 40
RANGES = {"24h": (timedelta(hours=24), "1h"), "30d": (timedelta(days=30), "1d")}
STATUSES = ["ok"] * 30 + ["error", "timeout", "denied", "cached", "approved"]


class Rollback(Exception):
    """Raised to roll the benchmark's rows back."""


class Command(BaseCommand):
    help = "Time the Overview's tool-call query: every row vs the server's summary."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--rounds", type=int, default=5)
        parser.add_argument("--calls", type=int, default=50_000)
        parser.add_argument("--seed", type=int, default=19)

    def handle(self, *args, rounds: int, calls: int, seed: int, **options):
        rng = random.Random(seed)
        try:
            with transaction.atomic(), override_settings(ALLOWED_HOSTS=["testserver"]):
                staff = build_world(rng, calls)
                client = Client()
                client.force_login(staff)
                self.stdout.write(f"{calls} tool calls over 30 days, {TOOLS} tools")
                for name, (span, bucket) in RANGES.items():
                    since = (timezone.now() - span).isoformat()
                    before = {"since": since, "limit": 50_000}
                    after = {"since": since, "bucket": bucket}
                    self.report(
                        name, "before", client, "/api/tool-calls/", before, rounds
                    )
                    self.report(
                        name, "after", client, "/api/tool-calls/summary/", after, rounds
                    )
                raise Rollback
        except Rollback:
            pass

    def report(self, name, label, client, path, query, rounds: int) -> None:
        durations, size = [], 0
        for _ in range(rounds):
            start = time.perf_counter()
            response = client.get(path, query)
            durations.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200, response.content[:500]
            size = len(response.content)
        self.stdout.write(
            f"{name} {label:6} p50 {statistics.median(durations):8.1f} ms"
            f"  {size / 1024:9.1f} KiB  {path}"
        )


def build_world(rng: random.Random, calls: int):
    User = get_user_model()
    prefix = f"bench{time.time_ns()}"
    staff = User.objects.create_user(f"{prefix}-staff", is_staff=True)
    User.objects.bulk_create(User(username=f"{prefix}-u{i}") for i in range(USERS))
    users = list(User.objects.filter(username__startswith=f"{prefix}-u"))
    now = timezone.now()
    rows = []
    for _ in range(calls):
        tool = rng.randrange(TOOLS)
        at = now - timedelta(seconds=rng.uniform(0, 30 * 86400))
        rows.append(
            ToolCall(
                user=rng.choice(users),
                session_id=f"s{rng.randrange(1000)}",
                agent=f"agent{tool % 5}",
                tool_name=f"tool{tool}",
                tool_full_name=f"toolset{tool % 8}.tool{tool}",
                args={"q": "x" * rng.randrange(40)},
                result_summary="r" * rng.randrange(200),
                status=rng.choice(STATUSES),
                access_rule="toolset is open to everyone",
                started_at=at,
                finished_at=at,
                duration_ms=int(rng.lognormvariate(5, 1.2)),
            )
        )
    ToolCall.objects.bulk_create(rows, batch_size=2000)
    # Written in bulk, not one by one as governance writes them: counted in the
    # Overview's totals at once, as the migration counts a team's history.
    count_all(ToolCall.objects.filter(user__username__startswith=prefix))
    return staff


if __name__ == "__main__":
    import sys

    Command().run_from_argv(["manage.py", "bench_overview", *sys.argv[1:]])
