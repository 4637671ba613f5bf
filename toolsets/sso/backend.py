"""The authentication backend of a provider sign-in (AUTHENTICATION_BACKENDS).

mozilla-django-oidc exchanges the code (with PKCE, the client secret in a Basic
header) and checks the ID token's signature against the provider's keys and its
nonce; this backend adds what it leaves out (OpenID Connect Core §3.1.3.7: the
token's issuer, audience, authorized party and expiry; the userinfo answer's
subject) and hands the claims to toolsets.sso.accounts. An ID token that fails a
check is a failed sign-in with a message (IDTokenRefused), never a server error.
"""

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import jwt
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest
from django.utils.translation import gettext as _
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from toolsets.sso import discovery
from toolsets.sso.accounts import (
    SignInRefused,
    link_signed_in_user,
    sign_in_with_claims,
)

logger = logging.getLogger(__name__)


class IDTokenRefused(SignInRefused):
    """The provider's ID token failed a check: the sign-in fails, saying which."""

    code = "id_token_refused"


def check_id_token_claims(payload: Mapping[str, Any]) -> None:
    """Refuse (IDTokenRefused) an ID token that is not the provider's for Toolcrib:
    its issuer, audience, authorized party (azp) and expiry."""
    if str(payload.get("iss", "")).rstrip("/") != settings.TOOLCRIB_OIDC_ISSUER:
        raise IDTokenRefused(_("The provider's ID token comes from another issuer."))
    client_id = settings.OIDC_RP_CLIENT_ID
    audience = payload.get("aud")
    audiences = audience if isinstance(audience, list) else [audience]
    if client_id not in audiences:
        raise IDTokenRefused(_("The provider's ID token is for another client."))
    authorized = payload.get("azp")
    if len(audiences) > 1 and authorized is None:
        raise IDTokenRefused(
            _(
                "The provider's ID token names several audiences and no authorized "
                "party (azp)."
            )
        )
    if authorized is not None and authorized != client_id:
        raise IDTokenRefused(
            _("The provider's ID token was issued to another client (its azp).")
        )
    if not isinstance(payload.get("exp"), int | float):
        raise IDTokenRefused(_("The provider's ID token has no expiry (exp)."))


@contextmanager
def _refusals() -> Iterator[None]:
    """PyJWT's and the library's refusals of an ID token, as IDTokenRefused."""
    try:
        yield
    except jwt.ExpiredSignatureError:
        raise IDTokenRefused(
            _(
                "The provider's ID token has expired: if that keeps happening, check "
                "this server's clock."
            )
        ) from None
    except jwt.ImmatureSignatureError:
        raise IDTokenRefused(
            _("The provider's ID token is not valid yet: check this server's clock.")
        ) from None
    except SuspiciousOperation as exc:
        # mozilla-django-oidc 5.0's words for a signature that does not verify.
        if "JWS token verification failed" in str(exc):
            raise IDTokenRefused(
                _("The ID token's signature is not the provider's.")
            ) from None
        raise IDTokenRefused(
            _("The provider's ID token did not pass its checks (%(exc)s)")
            % {"exc": exc}
        ) from None
    except jwt.InvalidTokenError as exc:
        raise IDTokenRefused(
            _("The provider's ID token did not pass its checks (%(exc)s).")
            % {"exc": exc}
        ) from None


class ProviderBackend(OIDCAuthenticationBackend):
    """Signs in whoever the configured OpenID Connect provider vouches for."""

    def __init__(self, *args, **kwargs) -> None:
        # Django builds every backend for every sign-in, passwords included: the
        # provider's endpoints are looked up only for a provider's callback.
        self.UserModel = get_user_model()

    @classmethod
    def for_provider(cls) -> "ProviderBackend":
        """A backend set up with the provider's endpoints, to call it directly
        (toolsets.sso.recheck). ProviderUnavailable if its discovery fails."""
        backend = cls()
        backend._configure()
        return backend

    def _configure(self) -> None:
        found = discovery.endpoints()
        self.OIDC_OP_TOKEN_ENDPOINT = found.token
        self.OIDC_OP_USER_ENDPOINT = found.userinfo
        self.OIDC_OP_JWKS_ENDPOINT = found.jwks
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.OIDC_RP_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = settings.OIDC_RP_SIGN_ALGO
        self.OIDC_RP_IDP_SIGN_KEY = None

    def authenticate(self, request: HttpRequest | None, **kwargs):
        if request is None or not settings.TOOLCRIB_OIDC_ISSUER:
            return None
        if not (request.GET.get("code") and request.GET.get("state")):
            return None
        self._configure()
        self.token_answer: dict = {}
        try:
            return super().authenticate(request, **kwargs)
        except IDTokenRefused as exc:
            # None: Django reports a failed sign-in (the lockout counts it), and
            # the callback sends her to the login page, with this message.
            logger.warning("provider sign-in refused: %s", exc)
            messages.error(request, f"{self._failed()} {exc}")
            return None

    def get_token(self, payload) -> dict:
        # The whole answer is kept: its refresh token re-checks her later.
        self.token_answer = super().get_token(payload)
        return self.token_answer

    def verify_token(self, token, **kwargs) -> dict:
        """The token's claims, its signature checked (and, for the code exchange's
        ID token, which comes with `nonce`, its nonce and check_id_token_claims)."""
        self._check_header(token)
        with _refusals():
            payload = super().verify_token(token, **kwargs)
        if "nonce" in kwargs:  # the code exchange's ID token, not a signed userinfo
            check_id_token_claims(payload)
        return payload

    def verify_refreshed_id_token(self, token: str, *, subject: str) -> dict:
        """A refresh's ID token (OpenID Connect Core §12.2): signed by the provider,
        for Toolcrib, about the same subject. Its nonce, if any, is the sign-in's."""
        self._check_header(token)
        with _refusals():
            payload = self.get_payload_data(token, self.retrieve_matching_jwk(token))
        check_id_token_claims(payload)
        if payload.get("sub") != subject:
            raise IDTokenRefused(_("The refreshed ID token is about someone else."))
        return payload

    def _check_header(self, token) -> None:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise IDTokenRefused(
                _("The provider's answer holds no ID token.")
            ) from None
        if header.get("alg") != self.OIDC_RP_SIGN_ALGO:
            raise IDTokenRefused(
                _(
                    "The provider's ID token is not signed with %(self_OIDC_RP_SIGN_ALGO)s (TOOLCRIB_OIDC_SIGN_ALGO): its alg is %(header_get_alg)r."
                )
                % {
                    "self_OIDC_RP_SIGN_ALGO": self.OIDC_RP_SIGN_ALGO,
                    "header_get_alg": header.get("alg"),
                }
            )
        if not isinstance(header.get("kid"), str):
            raise IDTokenRefused(
                _("The provider's ID token names no signing key (kid).")
            )

    @staticmethod
    def _failed() -> str:
        return f"Signing in with {settings.TOOLCRIB_OIDC_PROVIDER_NAME} failed."

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
                user = link_signed_in_user(
                    user=linking, claims=claims, tokens=self.token_answer
                )
                messages.success(
                    self.request,
                    "Your account is linked: sign in with "
                    f"{settings.TOOLCRIB_OIDC_PROVIDER_NAME} from now on.",
                )
                return user
            return sign_in_with_claims(claims=claims, tokens=self.token_answer)
        except SignInRefused as exc:
            logger.warning("provider sign-in refused: %s", exc)
            messages.error(self.request, str(exc))
            return None

    def get_user(self, user_id):
        # Django's own: an account switched off ends its sessions too.
        return ModelBackend.get_user(self, user_id)
