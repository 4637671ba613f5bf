from django.core.management.base import BaseCommand

from agents.adk.builder import broken_code_agents, sync_code_agents


class Command(BaseCommand):
    help = (
        "Create or update the rows of the agents defined in code "
        "(settings.TOOLCRIB_AGENTS); one that does not load is reported and left out."
    )

    def handle(self, *args, **options) -> None:
        for spec in sync_code_agents():
            self.stdout.write(f"agent {spec.name} ({spec.dotted_path})")
        for name, error in broken_code_agents().items():
            self.stderr.write(f"agent {name} left out: {error}")
