from django.core.management.base import BaseCommand

from agents.stored_secrets import scrub_stored_secrets


class Command(BaseCommand):
    help = (
        "Remove credentials stored in clear by older versions (a token given to an "
        "imported OpenAPI operation, in session state and event deltas). Idempotent."
    )

    def handle(self, *args, **options) -> None:
        scrubbed = scrub_stored_secrets()
        self.stdout.write(
            f"Scrubbed {scrubbed.sessions} session(s), {scrubbed.events} event(s), "
            f"{scrubbed.shared_state} shared state row(s)."
        )
