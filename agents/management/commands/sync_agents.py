from django.core.management.base import BaseCommand

from agents.adk.builder import sync_code_agents


class Command(BaseCommand):
    help = "Create or update the rows of the agents defined in code (settings.TOOLCRIB_AGENTS)."

    def handle(self, *args, **options) -> None:
        for spec in sync_code_agents():
            self.stdout.write(f"agent {spec.name} ({spec.dotted_path})")
