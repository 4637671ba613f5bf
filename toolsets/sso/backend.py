"""The authentication backend of a provider sign-in (AUTHENTICATION_BACKENDS).

mozilla-django-oidc exchanges the code (with PKCE, the client secret in a Basic
header) and checks the ID token's signature against the provider's keys and its
nonce; this backend adds what it leaves out (the token's issuer and audience, the
userinfo answer's subject) and hands the claims to toolsets.sso.accounts.
"""

import logging

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from toolsets.sso import discovery
from toolsets.sso.accounts import (
    SignInRefused,
    link_signed_in_user,
    sign_in_with_claims,
)

logger = logging.getLogger(__name__)


class ProviderBackend(OIDCAuthenticationBackend):
    """Signs in whoever the configured OpenID Connect provider vouches for."""

    def __init__(self, *args, **kwargs) -> None:
        # Django builds every backend for every sign-in, passwords included: the
        # provider's endpoints are looked up only for a provider's callback.
        self.UserModel = get_user_model()

    def authenticate(self, request: HttpRequest | None, **kwargs):
        if request is None or not settings.TOOLCRIB_OIDC_ISSUER:
            return None
        if not (request.GET.get("code") and request.GET.get("state")):
            return None
        found = discovery.endpoints()
        self.OIDC_OP_TOKEN_ENDPOINT = found.token
        self.OIDC_OP_USER_ENDPOINT = found.userinfo
        self.OIDC_OP_JWKS_ENDPOINT = found.jwks
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.OIDC_RP_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = settings.OIDC_RP_SIGN_ALGO
        self.OIDC_RP_IDP_SIGN_KEY = None
        return super().authenticate(request, **kwargs)

    def verify_token(self, token, **kwargs) -> dict:
        payload = super().verify_token(token, **kwargs)
        if str(payload.get("iss", "")).rstrip("/") != settings.TOOLCRIB_OIDC_ISSUER:
            raise SuspiciousOperation("The ID token comes from another issuer.")
        audience = payload.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if settings.OIDC_RP_CLIENT_ID not in audiences:
            raise SuspiciousOperation("The ID token is for another client.")
        return payload

    def get_userinfo(self, access_token, id_token, payload) -> dict:
        """The ID token's claims, and the userinfo endpoint's over them."""
        info = super().get_userinfo(access_token, id_token, payload)
        if not isinstance(info, dict) or info.get("sub") != payload.get("sub"):
            raise SuspiciousOperation("The userinfo answer is about someone else.")
        return {**payload, **info}

    def get_or_create_user(self, access_token, id_token, payload):
        claims = self.get_userinfo(access_token, id_token, payload)
        # Set by the callback for the flow /oidc/link/ started, and only that one.
        linking = getattr(self.request, "sso_link_user", None)
        try:
            if linking is not None:
                user = link_signed_in_user(user=linking, claims=claims)
                messages.success(
                    self.request,
                    "Your account is linked: sign in with "
                    f"{settings.TOOLCRIB_OIDC_PROVIDER_NAME} from now on.",
                )
                return user
            return sign_in_with_claims(claims=claims)
        except SignInRefused as exc:
            logger.warning("provider sign-in refused: %s", exc)
            messages.error(self.request, str(exc))
            return None

    def get_user(self, user_id):
        # Django's own: an account switched off ends its sessions too.
        return ModelBackend.get_user(self, user_id)
