import asyncio

from django.core.management.base import BaseCommand

from agents.cli import add_watch_arguments, watch


class Command(BaseCommand):
    help = "Print a session's events live from a Toolcrib server (a websocket client)."

    def add_arguments(self, parser) -> None:
        add_watch_arguments(parser)

    def handle(self, *args, **options) -> None:
        try:
            asyncio.run(
                watch(
                    server=options["url"],
                    session_id=options["session_id"],
                    token=options["token"],
                    after=options["after"],
                    out=self.stdout,
                    partials=options["partials"],
                )
            )
        except KeyboardInterrupt:
            pass
