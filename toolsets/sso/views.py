"""The pages of a provider sign-in: off to the provider, and back from it.

mozilla-django-oidc's views, with the provider's endpoints from its discovery
document, and a provider that does not answer sent back to the login page with a
message rather than a server error. /oidc/link/ is the same flow started by a
signed-in user to link her account (toolsets.sso.accounts.link_signed_in_user).
"""

import logging
from urllib.parse import parse_qs, urlsplit

import requests
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
    get_next_url,
)

from toolsets.sso import discovery
from toolsets.sso.accounts import SignInRefused, check_linkable

logger = logging.getLogger(__name__)

# The link flow under way in this browser session: its state and its user.
LINK_SESSION_KEY = "sso_link"
LINK_DONE_URL = "/tokens/"


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


class ProviderLinkView(ProviderSignInView):
    """POST /oidc/link/?next=...: the signed-in user links her account to the one
    she signs in with at the provider, which is asked to show its login page."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> HttpResponse:
        if not settings.TOOLCRIB_OIDC_ISSUER:
            raise Http404("Single sign-on is not configured.")
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        back = get_next_url(request, "next") or LINK_DONE_URL
        try:
            check_linkable(user=request.user)
        except SignInRefused as exc:
            messages.error(request, str(exc))
            return HttpResponseRedirect(back)
        response = self.get(request)
        state = parse_qs(urlsplit(response.get("Location", "")).query).get("state")
        if state:
            request.session[LINK_SESSION_KEY] = {
                "state": state[0],
                "user": request.user.pk,
                "back": back,
            }
        return response

    def get_extra_params(self, request: HttpRequest) -> dict:
        # The provider asks who is linking, rather than taking whoever its
        # session in this browser holds.
        return {**super().get_extra_params(request), "prompt": "login"}


class ProviderCallbackView(OIDCAuthenticationCallbackView):
    """GET /oidc/callback/: the provider's answer; signed in, or back to /login/."""

    link: dict | None = None

    def get(self, request: HttpRequest) -> HttpResponse:
        if not settings.TOOLCRIB_OIDC_ISSUER:
            raise Http404("Single sign-on is not configured.")
        self.link = self._link_under_way(request)
        request.sso_link_user = request.user if self.link else None
        try:
            return super().get(request)
        except (discovery.ProviderUnavailable, requests.RequestException) as exc:
            return _unavailable(request, exc)

    def login_failure(self) -> HttpResponse:
        if self.link:  # still signed in: back where the link was asked for
            return HttpResponseRedirect(self.link["back"])
        return super().login_failure()

    @staticmethod
    def _link_under_way(request: HttpRequest) -> dict | None:
        """The link flow this answer ends, if the same signed-in user started it."""
        link = request.session.pop(LINK_SESSION_KEY, None)
        if (
            isinstance(link, dict)
            and link.get("state") == request.GET.get("state")
            and request.user.is_authenticated
            and link.get("user") == request.user.pk
        ):
            return link
        return None
