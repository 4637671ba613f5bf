"""`POST /api/auth/token/`: a username and password for a new API token, shown once."""

from django.conf import settings
from django.contrib.auth import authenticate
from django.contrib.auth.models import AbstractBaseUser
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.tokens import issue_token
from project.errors import PasswordSignInOff, SignInLockedOut
from project.lockout import lockout_message

BAD_CREDENTIALS = "Unable to log in with provided credentials."


class SignInSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(
        max_length=4096, trim_whitespace=False, style={"input_type": "password"}
    )


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(
        help_text="Send as `Authorization: Token <token>`. Shown only now: the "
        "server keeps a digest of it."
    )


class ObtainTokenView(APIView):
    """Sign in with a username and password; get a new API token."""

    # The default parsers (JSON, form, multipart: what DRF's obtain_auth_token took).
    authentication_classes = []
    permission_classes = [AllowAny]

    @extend_schema(
        request=SignInSerializer,
        responses={
            200: TokenSerializer,
            400: OpenApiResponse(
                inline_serializer(
                    "SignInErrors",
                    {
                        "non_field_errors": serializers.ListField(
                            child=serializers.CharField(), required=False
                        ),
                        "username": serializers.ListField(
                            child=serializers.CharField(), required=False
                        ),
                        "password": serializers.ListField(
                            child=serializers.CharField(), required=False
                        ),
                    },
                ),
                description="Missing fields, or a wrong username or password.",
            ),
            403: OpenApiResponse(
                inline_serializer(
                    "PasswordSignInOff", {"detail": serializers.CharField()}
                ),
                description="Passwords are switched off (TOOLCRIB_PASSWORD_LOGIN): "
                "people sign in with the OpenID Connect provider.",
            ),
            429: OpenApiResponse(
                inline_serializer(
                    "SignInLockedOut", {"detail": serializers.CharField()}
                ),
                description="Too many failed sign-ins for this account from this "
                "address (or from this address, over all accounts): try again "
                "after the cool-off.",
            ),
        },
        auth=[],
    )
    def post(self, request: Request) -> Response:
        given = SignInSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        user = sign_in(request=request, **given.validated_data)
        return Response({"token": issue_token(user=user)})


def sign_in(*, request: Request, username: str, password: str) -> AbstractBaseUser:
    """The user these credentials name, checked by every auth backend (axes first).

    Axes counts the failure and flags the request once the account at this address
    (or the address over all accounts) is over its limit; then even the right
    password is refused from there until the cool-off.
    With passwords switched off, every password is refused before any check.
    """
    if not settings.TOOLCRIB_PASSWORD_LOGIN:
        raise PasswordSignInOff(settings.TOOLCRIB_OIDC_PROVIDER_NAME)
    user = authenticate(request=request, username=username, password=password)
    if getattr(request, "axes_locked_out", False):
        raise SignInLockedOut(lockout_message(request))
    if user is None:
        raise ValidationError({"non_field_errors": [BAD_CREDENTIALS]})
    return user
