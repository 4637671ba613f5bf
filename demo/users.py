"""The demo users of the embedded setup: created only by `manage.py demo_setup`."""

from django.contrib.auth import get_user_model

DEMO_USERS = [
    ("admin", "admin", True),
    ("alice", "alice", False),
    ("bob", "bob", False),
]


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
