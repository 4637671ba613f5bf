"""The rules of a staff change to a user (toolsets.people.users), below the API."""

import pytest
from django.contrib.auth import get_user_model
from django.db import close_old_connections, connection

from tests.threads import at_once
from toolsets.people import users
from toolsets.people.users import UserRefused

pytestmark = pytest.mark.django_db


def test_the_last_active_staff_is_never_switched_off_or_unmade(make_user):
    # A superuser who is not staff: a service caller (the admin, a command).
    root = get_user_model().objects.create_superuser("root", password="x")
    root.is_staff = False
    root.save()
    only = make_user("only", is_staff=True)

    for field in ("is_active", "is_staff"):
        with pytest.raises(UserRefused, match="last active staff") as refused:
            users.change_user(actor=root, user=only, changes={field: False})
        assert refused.value.field == field
    only.refresh_from_db()
    assert only.is_active and only.is_staff


def test_only_a_superuser_changes_a_superuser(make_user):
    sam = make_user("sam", is_staff=True)
    root = get_user_model().objects.create_superuser("root", password="x")

    with pytest.raises(UserRefused, match="superuser"):
        users.change_user(actor=sam, user=root, changes={"is_active": False})


@pytest.mark.django_db(transaction=True)
def test_two_staff_switching_each_other_off_at_once_leave_one(make_user):
    amy = make_user("amy", is_staff=True)
    ben = make_user("ben", is_staff=True)

    def switch_off(actor, user):
        close_old_connections()
        try:
            users.change_user(actor=actor, user=user, changes={"is_active": False})
        except UserRefused:
            return "refused"
        finally:
            connection.close()
        return "done"

    pairs = [(amy, ben), (ben, amy)]
    outcomes = at_once(lambda index: switch_off(*pairs[index]), threads=2)

    assert sorted(outcomes) == ["done", "refused"]
    active = get_user_model().objects.filter(is_staff=True, is_active=True)
    assert active.count() == 1
