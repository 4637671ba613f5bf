from django.core.management.base import BaseCommand

from agents.runtime import sync_code_agents
from toolsets.catalog import sync_catalog


class Command(BaseCommand):
    help = (
        "Bring the tool catalog up to date with the code: the toolsets of "
        "settings.TOOLCRIB_TOOLSETS and the tools of every code agent. Tools that "
        "disappeared are marked missing, never deleted."
    )

    def handle(self, *args, **options) -> None:
        sync_code_agents()
        report = sync_catalog()
        for label, names in [
            ("created", report.created),
            ("updated", report.updated),
            ("missing", report.missing),
            ("failed to load", report.failed),
        ]:
            for name in names:
                self.stdout.write(f"{label}: {name}")
        if not report.changed and not report.failed:
            self.stdout.write("The tool catalog is up to date.")
