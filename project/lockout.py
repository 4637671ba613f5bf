"""Refusing sign-ins after repeated failures (django-axes), in words a person reads.

Axes counts failed sign-ins per account and per client address (settings
AXES_FAILURE_LIMIT, AXES_COOLOFF_TIME, from TOOLCRIB_LOGIN_*). The API's token view
answers its own 429; axes' middleware calls lockout_response for every other sign-in
form (the /login/ page, the admin's).
"""

import math
from datetime import timedelta

from axes.helpers import get_cool_off
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

LOCKED_OUT_STATUS = 429


def lockout_message(request: HttpRequest | None = None) -> str:
    """Why a sign-in was refused, and when to try again."""
    wait = _minutes(get_cool_off(request) or timedelta(0))
    return (
        "Too many failed sign-in attempts for this account or from this address. "
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
