"""The retention job's Celery shell, under the name Celery beat schedules
(settings.CELERY_BEAT_SCHEDULE): keep it."""

from celery import shared_task

from agents.retention.jobs import apply_retention

APPLY_RETENTION = "agents.apply_retention"


@shared_task(name=APPLY_RETENTION, ignore_result=True)
def apply_retention_task() -> int:
    """Run the retention job (see jobs.apply_retention); how many rows it removed."""
    report = apply_retention()
    return sum(count.rows for count in report.counts)
