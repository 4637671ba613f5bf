"""Benchmark: what keeping the Overview's and usage's totals costs the hot path.

Writes audit rows as governance writes them (toolsets.governance.records'
`record_call`: the INSERT, now with the totals' upsert in one transaction) and
ends runs as a turn does (the conditional UPDATE, now with the usage totals'
upsert), each with and without the totals; prints the median time of one write.
Each write commits, as in a turn: run it on a throwaway database, which it leaves
its rows in (TOOLCRIB_DATA_DIR for SQLite, DATABASE_URL for PostgreSQL).

    .venv/bin/python -m bench.totals [--writes 2000] [--rounds 5]
"""

import bench.django_setup  # noqa: F401 - before any Django import

# isort: split

import statistics
import time
from contextlib import nullcontext
from datetime import timedelta
from unittest import mock

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connection, transaction
from django.utils import timezone

from agents.models import Run, Session
from agents.turns import drive
from toolsets.governance import records


class Command(BaseCommand):
    help = "Time an audit row's write and a run's end, with and without the totals."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--writes", type=int, default=2000)
        parser.add_argument("--rounds", type=int, default=5)

    def handle(self, *args, writes: int, rounds: int, **options):
        user = get_user_model().objects.create_user(f"bench-totals-{time.time_ns()}")
        self.stdout.write(f"{connection.vendor}: median of {rounds} rounds")
        for label, skip in (("with totals", False), ("without", True)):
            call = statistics.median(
                self._calls(user, writes, skip) for _ in range(rounds)
            )
            end = statistics.median(
                self._ends(user, writes, skip) for _ in range(rounds)
            )
            self.stdout.write(
                f"{label:12} audit row {call * 1e6:7.1f} µs   run end {end * 1e6:7.1f} µs"
            )

    def _calls(self, user, writes: int, skip: bool) -> float:
        create = records.record_call.func  # sync_to_async's own function, here
        patch = mock.patch.object(records, "count_call") if skip else nullcontext()
        now = timezone.now()
        with patch:
            start = time.perf_counter()
            for index in range(writes):
                create(
                    user_id=user.pk,
                    session_id="bench",
                    run_id=None,
                    invocation_id="bench",
                    agent="bench",
                    adk_agent="bench",
                    call_id=f"c{index}",
                    tool_name="tool",
                    tool_full_name=f"bench.tool{index % 7}",
                    args={},
                    result_summary="{}",
                    raw_result_summary="",
                    status="ok",
                    access_rule="",
                    started_at=now - timedelta(minutes=index % 300),
                    finished_at=now,
                    duration_ms=index % 900,
                    attempts=1,
                )
            return (time.perf_counter() - start) / writes

    def _ends(self, user, writes: int, skip: bool) -> float:
        session = Session.objects.create(
            app_name="bench", user_id=str(user.pk), adk_id=f"b{time.time_ns()}"
        )
        runs = [
            Run(session=session, user=user, status=Run.Status.RUNNING)
            for _ in range(writes)
        ]
        Run.objects.bulk_create(runs)
        patch = mock.patch.object(drive, "count_ended_run") if skip else nullcontext()
        with patch:
            start = time.perf_counter()
            for run in runs:
                run.session = session
                run.status, run.finished_at = Run.Status.SUCCEEDED, timezone.now()
                run.total_tokens = 100
                # The end's statements, as drive._store_end runs them (no spans
                # or events: those cost the same with or without the totals).
                with transaction.atomic():
                    ending = {name: getattr(run, name) for name in drive.ENDING}
                    drive.SAVE_END.run(id=run.pk, **ending)
                    drive.count_ended_run(run)
            return (time.perf_counter() - start) / writes


if __name__ == "__main__":
    import sys

    Command().run_from_argv(["manage.py", "bench_totals", *sys.argv[1:]])
