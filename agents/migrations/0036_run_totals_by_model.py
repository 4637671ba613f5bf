# Splits the usage totals kept before models were counted apart by model, from
# the runs they counted: a total whose runs are all still stored (same number,
# same tokens) becomes one row per model; one whose runs were partly removed
# (retention) keeps its blank model. Costs start at 0: nothing had a price.
from collections import defaultdict
from datetime import UTC

from django.db import migrations
from django.db.models import Count, Sum
from django.db.models.functions import TruncHour

TOKENS = ("prompt_tokens", "completion_tokens", "total_tokens")
ENDED = ("succeeded", "failed", "waiting", "cancelled")


def split_by_model(apps, schema_editor):
    """One row per model for every total whose runs are all still stored."""
    Run = apps.get_model("agents", "Run")
    RunTotal = apps.get_model("agents", "RunTotal")
    alias = schema_editor.connection.alias
    by_key = defaultdict(list)
    grouped = (
        Run.objects.using(alias)
        .filter(status__in=ENDED)
        .order_by()
        .annotate(run_hour=TruncHour("created_at", tzinfo=UTC))
        .values("run_hour", "user_id", "session__app_name", "status", "model")
        .annotate(n=Count("id"), **{name: Sum(name) for name in TOKENS})
    )
    for row in grouped.iterator():
        key = (row["run_hour"], row["user_id"], row["session__app_name"], row["status"])
        by_key[key].append(row)
    for total in RunTotal.objects.using(alias).filter(model="").iterator():
        key = (total.hour, total.user_id, total.agent, total.outcome)
        rows = by_key.get(key, [])
        counted = [sum(row[name] or 0 for row in rows) for name in ("n", *TOKENS)]
        kept = [total.runs, *(getattr(total, name) for name in TOKENS)]
        if not rows or counted != kept:
            continue
        RunTotal.objects.using(alias).filter(pk=total.pk).delete()
        RunTotal.objects.using(alias).bulk_create(
            RunTotal(
                hour=total.hour,
                user_id=total.user_id,
                agent=total.agent,
                outcome=total.outcome,
                model=row["model"],
                runs=row["n"],
                **{name: row[name] or 0 for name in TOKENS},
            )
            for row in rows
        )


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0035_model_connections_cost_budgets"),
    ]

    operations = [
        migrations.RunPython(split_by_model, migrations.RunPython.noop),
    ]
