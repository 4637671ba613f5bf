from django.core.management import call_command
from django.core.management.base import BaseCommand

from agents.runtime import broken_code_agents, sync_code_agents
from demo.users import ensure_demo_groups, ensure_demo_users


class Command(BaseCommand):
    help = (
        "Create the demo users (admin/admin, alice/alice, bob/bob), their groups "
        "(managers: bob) and the demo agents."
    )

    def handle(self, *args, **options) -> None:
        specs = sync_code_agents()
        self.stdout.write("Agents: " + ", ".join(spec.name for spec in specs))
        # One that does not load is left out; the others and the server go on.
        for name, error in broken_code_agents().items():
            self.stderr.write(f"Agent {name} left out: {error}")
        call_command("sync_tools", stdout=self.stdout)
        self.stdout.write("Demo users (username / password):")
        for username, password, is_admin, created in ensure_demo_users():
            role = "superuser" if is_admin else "user"
            note = "created" if created else "already there, password unchanged"
            self.stdout.write(f"  {username} / {password}  ({role}, {note})")
        self.stdout.write("Demo groups:")
        for name, members, created in ensure_demo_groups():
            note = "created" if created else "already there, members unchanged"
            self.stdout.write(f"  {name}: {', '.join(members) or 'nobody'}  ({note})")
