# Counts the rows stored before the totals existed: a migration of its own, so
# the totals' unique key (created at the end of the table's migration on
# PostgreSQL) is there for the upsert.
from datetime import UTC

from django.db import migrations
from django.db.models import (
    BigIntegerField,
    Case,
    Count,
    F,
    Max,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce, NullIf, TruncDay, TruncHour

from project.counters import Counters

BATCH = 20_000
EVERYONE = -1  # call_totals.EVERYONE: a day's row of every user's calls
# models.LATENCY_BUCKETS as this migration made them.
BUCKETS = (
    (10, "le_10ms"),
    (25, "le_25ms"),
    (50, "le_50ms"),
    (100, "le_100ms"),
    (250, "le_250ms"),
    (500, "le_500ms"),
    (1000, "le_1s"),
    (2500, "le_2500ms"),
    (5000, "le_5s"),
    (10000, "le_10s"),
    (30000, "le_30s"),
    (60000, "le_60s"),
    (None, "over_60s"),
)


def count_calls(apps, schema_editor):
    """Add every audit row to the totals, its hour's and its day's for everyone,
    in batches of BATCH rows by id."""
    ToolCall = apps.get_model("toolsets", "ToolCall")
    ToolCallTotal = apps.get_model("toolsets", "ToolCallTotal")
    alias = schema_editor.connection.alias
    names = [name for _, name in BUCKETS]
    totals = Counters(
        ToolCallTotal,
        key=["hour", "user_id", "agent", "tool", "status"],
        sums=["calls", *names],
        maxima=["max_ms"],
    )
    integer = BigIntegerField()
    buckets, low = {}, -1
    for bound, name in BUCKETS:
        within = {"duration_ms__gt": low}
        if bound is not None:
            within["duration_ms__lte"] = bound
            low = bound
        buckets[f"n_{name}"] = Sum(
            Case(When(**within, then=Value(1)), default=0, output_field=integer)
        )
    calls = ToolCall.objects.using(alias)
    last = calls.aggregate(last=Max("id"))["last"] or 0
    for start in range(0, last, BATCH):
        batch = calls.filter(id__gt=start, id__lte=start + BATCH).order_by()
        for trunc, user in (
            (TruncHour, Coalesce("user_id", 0)),
            (TruncDay, Value(EVERYONE)),
        ):
            grouped = (
                batch.annotate(
                    t_hour=trunc("started_at", tzinfo=UTC),
                    t_user=user,
                    t_tool=Coalesce(
                        NullIf(F("tool_full_name"), Value("")), F("tool_name")
                    ),
                )
                .values("t_hour", "t_user", "agent", "t_tool", "status")
                .annotate(n=Count("id"), **buckets, longest=Max("duration_ms"))
                .values_list(
                    "t_hour",
                    "t_user",
                    "agent",
                    "t_tool",
                    "status",
                    "n",
                    *buckets,
                    "longest",
                )
            )
            totals.add_query(grouped)


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0022_tool_call_totals"),
    ]

    operations = [
        migrations.RunPython(count_calls, migrations.RunPython.noop),
    ]
