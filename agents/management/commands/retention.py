from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agents.models import AgentSpec
from agents.retention.jobs import Report, apply_retention, plan_retention


class Command(BaseCommand):
    help = (
        "Remove what is older than the retention settings keep (docs/retention.md): "
        "sessions idle past their agent's days, with everything in them, and audit "
        "rows past TOOLCRIB_RETENTION_AUDIT_DAYS. --dry-run says what it would remove."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--dry-run", action="store_true", help="Count, and remove nothing."
        )
        parser.add_argument(
            "--agent", help="Only this agent's sessions and audit rows."
        )

    def handle(self, *args, dry_run: bool = False, agent: str | None = None, **options):
        if agent is not None and not AgentSpec.objects.filter(name=agent).exists():
            raise CommandError(f"No agent is named {agent!r}.")
        report = (
            plan_retention(agent=agent) if dry_run else apply_retention(agent=agent)
        )
        self._write(report)

    def _write(self, report: Report) -> None:
        if report.skipped:
            self.stdout.write(
                "Another run of the retention job is under way: nothing done."
            )
            return
        self.stdout.write(
            f"Sessions kept {_days(settings.TOOLCRIB_RETENTION_DAYS)} after their last "
            f"activity (unless their agent says otherwise); the audit "
            f"{_days(settings.TOOLCRIB_RETENTION_AUDIT_DAYS)}."
        )
        verb = "Would remove" if report.dry_run else "Removed"
        if not report.counts:
            self.stdout.write(f"{verb} nothing.")
            return
        self.stdout.write(f"{verb}:")
        self.stdout.write(f"  {'kind':<20} {'agent':<24} {'rows':>10}  oldest")
        for count in report.counts:
            oldest = f"{count.oldest:%Y-%m-%d %H:%M} UTC" if count.oldest else ""
            agent = count.agent or "-"
            self.stdout.write(
                f"  {count.kind:<20} {agent:<24} {count.rows:>10}  {oldest}"
            )
        if report.archive is not None:
            self.stdout.write(f"Archived to {report.archive}")


def _days(days: int) -> str:
    return f"{days} days" if days > 0 else "forever"
