"""Checks every request of a signed-in account passes: TOOLCRIB_ACCOUNT_CHECKS.

A web session (AccountCheckMiddleware), an API token (agents.tokens: over HTTP, on
sockets and at the gateway) and a socket's session cookie (realtime.wsauth) ask
check_account before anything else. The runtime never imports governance: single
sign-on's re-check against the provider (toolsets.sso.recheck) arrives by name from
settings, the way plugins do (agents/plugins.py).
"""

from collections.abc import Callable
from functools import cache

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest, HttpResponse
from django.utils.module_loading import import_string

from project.errors import SignInEnded

Check = Callable[..., None]


def check_account(*, user: AbstractBaseUser) -> None:
    """Run every check of TOOLCRIB_ACCOUNT_CHECKS on a signed-in user.

    Raises:
        SignInEnded: a check refused her; her credential opens nothing now.
    """
    for check in _checks(tuple(settings.TOOLCRIB_ACCOUNT_CHECKS)):
        check(user=user)


def passes(*, user: AbstractBaseUser) -> bool:
    """Does a signed-in user pass every check (see check_account)?"""
    try:
        check_account(user=user)
    except SignInEnded:
        return False
    return True


@cache
def _checks(paths: tuple[str, ...]) -> list[Check]:
    return [import_string(path) for path in paths]


class AccountCheckMiddleware:
    """A web session whose user a check refuses ends here: the request goes on as
    an anonymous one (the login page, or 401/403 from the API), with the reason."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.user.is_authenticated:
            try:
                check_account(user=request.user)
            except SignInEnded as exc:
                logout(request)
                messages.error(request, str(exc))
        return self.get_response(request)
