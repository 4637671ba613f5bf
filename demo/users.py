"""The demo users and groups of the embedded setup: created only by `manage.py demo_setup`."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

DEMO_USERS = [
    ("admin", "admin", True),
    ("alice", "alice", False),
    ("bob", "bob", False),
]
# Groups the demo agents rely on, with their first members: the reimbursement
# demo's `managers` answer large claims (demo/reimbursement.py), so alice asks and
# bob approves.
DEMO_GROUPS = {"managers": ["bob"]}


def ensure_demo_users() -> list[tuple[str, str, bool, bool]]:
    """Create the demo users that do not exist yet; never touch existing ones."""
    User = get_user_model()
    report = []
    for username, password, is_admin in DEMO_USERS:
        user, created = User.objects.get_or_create(
            username=username, defaults={"is_staff": is_admin, "is_superuser": is_admin}
        )
        if created:
            user.set_password(password)
            user.save(update_fields=["password"])
        report.append((username, password, is_admin, created))
    return report


def ensure_demo_groups() -> list[tuple[str, list[str], bool]]:
    """Create the demo groups that do not exist yet, with their members; never touch
    existing ones (staff may have changed them)."""
    report = []
    for name, usernames in DEMO_GROUPS.items():
        group, created = Group.objects.get_or_create(name=name)
        if created:
            group.user_set.add(*get_user_model().objects.filter(username__in=usernames))
        members = sorted(group.user_set.values_list("username", flat=True))
        report.append((name, members, created))
    return report
