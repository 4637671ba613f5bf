# Counts the rows stored before the totals existed: a migration of its own, so
# the totals' unique key (created at the end of the table's migration on
# PostgreSQL) is there for the upsert.
from datetime import UTC

from django.db import migrations
from django.db.models import Count, Sum
from django.db.models.functions import TruncHour

from project.counters import Counters

BATCH = 20_000
TOKENS = ("prompt_tokens", "completion_tokens", "total_tokens")
ENDED = ("succeeded", "failed", "waiting", "cancelled")


def count_ended_runs(apps, schema_editor):
    """Add every ended run to the totals, in batches of BATCH runs by id (a run
    still queued or running is counted when it ends)."""
    Run = apps.get_model("agents", "Run")
    RunTotal = apps.get_model("agents", "RunTotal")
    alias = schema_editor.connection.alias
    totals = Counters(
        RunTotal, key=["hour", "user_id", "agent", "outcome"], sums=["runs", *TOKENS]
    )
    runs = Run.objects.using(alias).filter(status__in=ENDED).order_by("pk")
    last = None
    while True:
        batch = runs if last is None else runs.filter(pk__gt=last)
        bound = list(batch.values_list("pk", flat=True)[BATCH - 1 : BATCH])
        if bound:
            batch = batch.filter(pk__lte=bound[0])
        grouped = (
            batch.order_by()
            .annotate(run_hour=TruncHour("created_at", tzinfo=UTC))
            .values("run_hour", "user_id", "session__app_name", "status")
            .annotate(n=Count("id"), **{f"t_{name}": Sum(name) for name in TOKENS})
            .values_list(
                "run_hour",
                "user_id",
                "session__app_name",
                "status",
                "n",
                *(f"t_{name}" for name in TOKENS),
            )
        )
        totals.add_query(grouped)
        if not bound:
            return
        last = bound[0]


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0025_run_totals"),
    ]

    operations = [
        migrations.RunPython(count_ended_runs, migrations.RunPython.noop),
    ]
