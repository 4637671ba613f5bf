"""toolsets.sso.recheck under threads: requests of many users at once, as Daphne
serves them on its thread pool, each leave their user found checked in this
process, and her next request within the recheck time costs no query.

The process's map of users found checked holds timestamps only: a stale one can
only skip a query whose answer her own row carries (an off-boarded user is
inactive). tests/project/test_threads_postgresql.py runs this file on PostgreSQL
too.
"""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import close_old_connections, connection
from django.utils import timezone

from tests.threads import at_once
from toolsets.models import ProviderIdentity
from toolsets.sso import recheck

pytestmark = pytest.mark.django_db(transaction=True)

ISSUER = "http://127.0.0.1:9"  # nothing listens: never asked here


def in_thread(call):
    """`call` on a request's thread, whose connection is closed as it ends."""

    def run(index: int):
        try:
            return call(index)
        finally:
            close_old_connections()
            connection.close()

    return run


def test_requests_of_many_users_at_once_each_leave_their_user_checked(
    settings, make_user, django_assert_num_queries
):
    settings.TOOLCRIB_OIDC_ISSUER = ISSUER
    settings.TOOLCRIB_SSO_RECHECK_SECONDS = 300
    cache.clear()
    recheck.forget_recent_checks()
    users = [make_user(f"user{n}") for n in range(8)]
    for user in users[::2]:  # the others are not linked to the provider
        ProviderIdentity.objects.create(
            user=user,
            issuer=ISSUER,
            subject=f"sub-{user.pk}",
            checked_at=timezone.now() - timedelta(seconds=10),
        )

    at_once(in_thread(lambda i: recheck.check_account(user=users[i])))

    assert set(recheck._recent) == {user.pk for user in users}
    with django_assert_num_queries(0):
        for user in users:
            recheck.check_account(user=user)
    recheck.forget_recent_checks()
