"""The two pages of a provider sign-in: off to the provider, and back from it.

mozilla-django-oidc's views, with the provider's endpoints from its discovery
document, and a provider that does not answer sent back to the login page with a
message rather than a server error.
"""

import logging

import requests
from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)

from toolsets.sso import discovery

logger = logging.getLogger(__name__)


def _unavailable(request: HttpRequest, exc: Exception) -> HttpResponse:
    logger.warning("sign-in provider unavailable: %s", exc)
    name = settings.TOOLCRIB_OIDC_PROVIDER_NAME
    messages.error(
        request,
        f"Signing in with {name} failed: it did not answer as expected. Try again in a moment.",
    )
    return HttpResponseRedirect(settings.LOGIN_REDIRECT_URL_FAILURE)


class ProviderSignInView(OIDCAuthenticationRequestView):
    """GET /oidc/authenticate/?next=...: off to the provider's sign-in page."""

    def __init__(self, *args, **kwargs) -> None:
        # The endpoint is found per request (the library reads it from settings).
        super(OIDCAuthenticationRequestView, self).__init__(*args, **kwargs)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not settings.TOOLCRIB_OIDC_ISSUER:
            raise Http404("Single sign-on is not configured.")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = discovery.endpoints().authorization
        except discovery.ProviderUnavailable as exc:
            return _unavailable(request, exc)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        return super().get(request)


class ProviderCallbackView(OIDCAuthenticationCallbackView):
    """GET /oidc/callback/: the provider's answer; signed in, or back to /login/."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if not settings.TOOLCRIB_OIDC_ISSUER:
            raise Http404("Single sign-on is not configured.")
        try:
            return super().get(request)
        except (discovery.ProviderUnavailable, requests.RequestException) as exc:
            return _unavailable(request, exc)
