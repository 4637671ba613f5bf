"""Refusing sign-ins after repeated failures (django-axes), in words a person reads.

Axes counts failed sign-ins per account *and* client address, together: wrong
passwords for alice from one address lock alice there, never alice signing in from
elsewhere nor bob from that address (AXES_FAILURE_LIMIT, from
TOOLCRIB_LOGIN_FAILURE_LIMIT). So a stranger cannot lock anyone out of her own
account. One address guessing across many accounts is stopped by a much higher
limit of its own (TOOLCRIB_LOGIN_ADDRESS_FAILURE_LIMIT), which PairLockoutHandler
adds to axes' count. The API's token view answers its own 429; axes' middleware
calls lockout_response for every other sign-in form (the /login/ page, the admin's).
"""

import math
from datetime import timedelta

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_cool_off, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

LOCKED_OUT_STATUS = 429
# Set on a request refused because its address, not its account there, is locked.
ADDRESS_LOCKED = "toolcrib_address_locked"


class PairLockoutHandler(AxesDatabaseHandler):
    """Axes' database handler, locking an (account, address) pair at axes' limit,
    and a whole address at TOOLCRIB_LOGIN_ADDRESS_FAILURE_LIMIT (0: never)."""

    def get_failures(self, request, credentials: dict | None = None) -> int:
        """The pair's failures, or the failure limit itself once the address has
        failed TOOLCRIB_LOGIN_ADDRESS_FAILURE_LIMIT times (with any accounts)."""
        failures = super().get_failures(request, credentials)
        limit = settings.TOOLCRIB_LOGIN_ADDRESS_FAILURE_LIMIT
        if not limit or _address_failures(request) < limit:
            return failures
        setattr(request, ADDRESS_LOCKED, True)
        return max(failures, get_failure_limit(request, credentials))


def _address_failures(request: HttpRequest) -> int:
    """Failed sign-ins from the request's address within the cool-off, any account."""
    attempts = AccessAttempt.objects.filter(ip_address=request.axes_ip_address)
    if settings.AXES_COOLOFF_TIME is not None:
        attempts = attempts.filter(attempt_time__gte=get_cool_off_threshold(request))
    total = attempts.aggregate(total=Sum("failures_since_start"))["total"]
    return total or 0


def lockout_message(request: HttpRequest | None = None) -> str:
    """Why a sign-in was refused, and when to try again."""
    wait = _minutes(get_cool_off(request) or timedelta(0))
    if getattr(request, ADDRESS_LOCKED, False):
        return (
            "Too many failed sign-in attempts from your address, for any account. "
            f"Try again in {wait}."
        )
    return (
        "Too many failed sign-in attempts for this account from your address. "
        f"Try again in {wait}."
    )


def lockout_response(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict | None = None,
) -> HttpResponse:
    """Axes' AXES_LOCKOUT_CALLABLE: JSON under /api/, a page everywhere else."""
    message = lockout_message(request)
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message}, status=LOCKED_OUT_STATUS)
    return render(
        request,
        "frontend/locked_out.html",
        {"message": message},
        status=LOCKED_OUT_STATUS,
    )


def _minutes(delta: timedelta) -> str:
    minutes = max(1, math.ceil(delta.total_seconds() / 60))
    return "1 minute" if minutes == 1 else f"{minutes} minutes"
