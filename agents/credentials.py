"""Credentials a user gives tools: built from an answer, kept sealed, revocable.

A tool's `request_credential(...)` pauses for a person like any other request
(agents.requests, kind "credential"): the session owner answers it, and the
answer becomes a Credential here (build_credential), sealed into the owner's row
for the request's credential key in the session's app (agent) by
agents.adk.credentials. Later sessions of the same app find it with
`load_credential` until the owner revokes it (revoke_credential()); another app
asking with the same key asks again.

A secret never leaves this module and agents.adk.credentials other than sealed,
or in memory for the one invocation.
"""

from collections.abc import Mapping

from django.db.models import QuerySet
from django.utils.translation import gettext
from google.adk.auth.auth_credential import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
    OAuth2Auth,
)

from agents.models import Credential, Request
from project.errors import DomainError, NotFoundError


class MissingCredentialField(DomainError):
    """A credential answer lacks a field its scheme needs."""

    code = "missing_field"

    def __init__(self, field: str, scheme: str) -> None:
        self.field = field
        super().__init__(
            gettext("A %(scheme)s credential needs %(field)s.")
            % {"scheme": scheme, "field": field}
        )


class UnsupportedScheme(DomainError):
    """A credential of this scheme cannot be given here."""

    field = "scheme"
    code = "unsupported_scheme"

    def __init__(self, scheme: str) -> None:
        super().__init__(
            gettext("Credentials of scheme %(scheme)r cannot be answered here.")
            % {"scheme": scheme}
        )


def user_credentials(*, user) -> QuerySet[Credential]:
    """The credentials `user` has given, most recently changed first."""
    return Credential.objects.filter(owner=user)


def revoke_credential(*, user, credential_id) -> None:
    """Forget one of `user`'s credentials: the next tool that needs it asks again."""
    if not str(credential_id).isdigit():
        raise NotFoundError(gettext("No such credential."))
    deleted, _ = Credential.objects.filter(pk=int(credential_id), owner=user).delete()
    if not deleted:
        raise NotFoundError(gettext("No such credential."))


def build_credential(request: Request, answer: Mapping[str, str]) -> AuthCredential:
    """The AuthCredential the request's scheme calls for, from the answer's fields.

    Raises:
        MissingCredentialField: The answer lacks what the scheme needs.
        UnsupportedScheme: Nothing here answers a credential of this scheme.
    """
    scheme = request.scheme
    if scheme == "apiKey":
        return AuthCredential(
            auth_type=AuthCredentialTypes.API_KEY,
            api_key=_needed(answer, "api_key", scheme),
        )
    if scheme == "http":
        return _http_credential(request, answer)
    if scheme in {"oauth2", "openIdConnect"}:
        kind = (
            AuthCredentialTypes.OAUTH2
            if scheme == "oauth2"
            else AuthCredentialTypes.OPEN_ID_CONNECT
        )
        return AuthCredential(auth_type=kind, oauth2=_oauth2(answer, scheme))
    raise UnsupportedScheme(scheme)


def _oauth2(answer: Mapping[str, str], scheme: str) -> OAuth2Auth:
    if answer.get("auth_response_uri"):
        # The provider's redirect after a sign-in (agents.oauth2): ADK exchanges its
        # code for tokens when the tool runs again.
        return OAuth2Auth(
            auth_response_uri=answer["auth_response_uri"],
            redirect_uri=answer.get("redirect_uri") or None,
            state=answer.get("state") or None,
            code_verifier=answer.get("code_verifier") or None,
        )
    return OAuth2Auth(
        access_token=_needed(answer, "access_token", scheme),
        refresh_token=answer.get("refresh_token") or None,
    )


def answer_fields(request: Request) -> list[str]:
    """The fields an answer to the credential request gives, by its scheme."""
    scheme = request.scheme
    if scheme == "apiKey":
        return ["api_key"]
    if scheme == "http":
        return ["username", "password"] if _is_basic(request) else ["token"]
    if scheme in {"oauth2", "openIdConnect"}:
        return ["access_token"]
    return []


def _is_basic(request: Request) -> bool:
    return _http_scheme(request).lower() == "basic"


def _http_scheme(request: Request) -> str:
    return str(request.auth_config.get("auth_scheme", {}).get("scheme") or "")


def _http_credential(request: Request, answer: Mapping[str, str]) -> AuthCredential:
    http_scheme = _http_scheme(request)
    if _is_basic(request):
        credentials = HttpCredentials(
            username=_needed(answer, "username", "basic"),
            password=_needed(answer, "password", "basic"),
        )
    else:
        credentials = HttpCredentials(token=_needed(answer, "token", "bearer"))
    return AuthCredential(
        auth_type=AuthCredentialTypes.HTTP,
        http=HttpAuth(scheme=http_scheme or "bearer", credentials=credentials),
    )


def _needed(answer: Mapping[str, str], field: str, scheme: str) -> str:
    value = answer.get(field)
    if not value:
        raise MissingCredentialField(field, scheme)
    return value
