"""When a linked user's request asks the provider about her again, and what it costs
(toolsets/sso/recheck.py). What the provider's answers do is in
tests/security/test_sso_offboarding.py, against the real test provider."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.utils import timezone

from project.metrics import SSO_RECHECKS
from toolsets.models import ProviderIdentity
from toolsets.sso.recheck import RETRY_SECONDS, check_account

pytestmark = pytest.mark.django_db

# Nothing listens on port 9: every call to this provider is a refused connection.
SILENT_ISSUER = "http://127.0.0.1:9"


@pytest.fixture
def provider(settings):
    settings.TOOLCRIB_OIDC_ISSUER = SILENT_ISSUER
    settings.OIDC_RP_CLIENT_ID = "toolcrib"
    settings.OIDC_RP_CLIENT_SECRET = "secret"
    settings.TOOLCRIB_SSO_RECHECK_SECONDS = 300
    cache.clear()
    return settings


def linked(user, *, checked_ago: timedelta | None) -> ProviderIdentity:
    checked_at = None if checked_ago is None else timezone.now() - checked_ago
    return ProviderIdentity.objects.create(
        user=user, issuer=SILENT_ISSUER, subject=f"sub-{user.pk}", checked_at=checked_at
    )


def test_a_user_checked_recently_costs_one_query_then_none(
    provider, alice, django_assert_num_queries
):
    linked(alice, checked_ago=timedelta(seconds=10))

    with django_assert_num_queries(1):
        check_account(user=alice)
    with django_assert_num_queries(0):
        check_account(user=alice)


def test_an_unlinked_user_costs_one_query_per_recheck_time(
    provider, alice, django_assert_num_queries
):
    with django_assert_num_queries(1):
        check_account(user=alice)
    with django_assert_num_queries(0):
        check_account(user=alice)


def test_without_a_provider_nothing_is_checked(
    settings, alice, django_assert_num_queries
):
    settings.TOOLCRIB_OIDC_ISSUER = ""

    with django_assert_num_queries(0):
        check_account(user=alice)


def test_a_provider_that_does_not_answer_is_asked_again_a_minute_later(provider, alice):
    identity = linked(alice, checked_ago=timedelta(hours=1))
    before = SSO_RECHECKS.labels("unreachable")._value.get()

    check_account(user=alice)  # no refusal: her access goes on

    identity.refresh_from_db()
    due_again = identity.checked_at + timedelta(seconds=300)
    assert abs((due_again - timezone.now()).total_seconds() - RETRY_SECONDS) < 5
    assert SSO_RECHECKS.labels("unreachable")._value.get() == before + 1
    alice.refresh_from_db()
    assert alice.is_active


def test_after_no_answer_nobody_is_asked_about_for_a_minute(
    provider, alice, bob, django_assert_num_queries
):
    linked(alice, checked_ago=timedelta(hours=1))
    bobs = linked(bob, checked_ago=timedelta(hours=1))
    check_account(user=alice)  # the provider does not answer

    with django_assert_num_queries(0):
        check_account(user=bob)

    bobs.refresh_from_db()
    assert bobs.checked_at < timezone.now() - timedelta(minutes=59)  # not asked


def test_a_superuser_is_never_checked(provider, django_assert_num_queries):
    admin = get_user_model().objects.create_superuser("admin", password="pw")
    linked(admin, checked_ago=None)

    with django_assert_num_queries(0):
        check_account(user=admin)
