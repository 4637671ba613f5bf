"""Credentials a tool asks for: answered by the session owner, kept sealed, revocable.

A tool's `request_credential(...)` leaves a pending CredentialRequest (recorded by
turns/drive.py through agents.adk.credentials) and an `auth_request` event. The session
owner answers it, over the API (`POST /api/auth-requests/{id}/answer/`) or the
session socket (a `credential` frame): answer_auth_request(). The secret is sealed
into the owner's Credential for the request's credential key in the session's app
(agent), and one new Run resumes the invocation; the tool runs again and reads the
credential with `get_auth_response`. Later sessions of the same app find it with
`load_credential` until the owner revokes it (revoke_credential()); another app
asking with the same key asks again.

Only the session owner answers: a credential is personal, so neither staff nor an
approver group may answer for someone. A secret never leaves this module and
agents.adk.credentials other than sealed, or in memory for the one invocation.
"""

from collections.abc import Mapping

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from google.adk.auth.auth_credential import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
    OAuth2Auth,
)
from google.genai import types

from agents.adk.auth import AUTH_CALL
from agents.adk.credentials import CREDENTIAL_REF, store_credential
from agents.models import Credential, CredentialRequest, Run
from agents.turns import start
from project.errors import DomainError, NotFoundError

ANSWER_FIELDS = (
    "api_key",
    "token",
    "username",
    "password",
    "access_token",
    "refresh_token",
)


class AuthRequestAnswered(DomainError):
    field = "status"
    code = "already_answered"

    def __init__(self) -> None:
        super().__init__("This credential request has already been answered.")


class MissingCredentialField(DomainError):
    code = "missing_field"

    def __init__(self, field: str, scheme: str) -> None:
        self.field = field
        super().__init__(f"A {scheme} credential needs {field}.")


class UnsupportedScheme(DomainError):
    field = "scheme"
    code = "unsupported_scheme"

    def __init__(self, scheme: str) -> None:
        super().__init__(f"Credentials of scheme {scheme!r} cannot be answered here.")


def access_auth_request(*, user, request_id) -> CredentialRequest:
    """The request if it asks `user` (the session owner); 404 for anyone else."""
    if not str(request_id).isdigit():
        raise NotFoundError("No such credential request.")
    found = CredentialRequest.objects.select_related("session").filter(
        pk=int(request_id), session__owner=user
    )
    request = found.first()
    if request is None:
        raise NotFoundError("No such credential request.")
    return request


def pending_auth_requests(*, user) -> QuerySet[CredentialRequest]:
    """Credential requests waiting for `user`'s answer, newest first."""
    return CredentialRequest.objects.filter(
        session__owner=user, status=CredentialRequest.Status.PENDING
    )


def answer_auth_request(*, user, request_id, answer: Mapping[str, str]) -> Run:
    """Seal the owner's answer and resume the tool that asked.

    Raises:
        NotFoundError: The request is not `user`'s.
        AuthRequestAnswered: It was answered before.
        MissingCredentialField: The answer lacks what the scheme needs.
    """
    with transaction.atomic():
        request = access_auth_request(user=user, request_id=request_id)
        return _answer(request, user=user, answer=answer)


def answer_in_session(
    *, user, session_id: str, call_id: str, answer: Mapping[str, str]
) -> Run:
    """answer_auth_request(), for a socket of one session: by the request's call id."""
    with transaction.atomic():
        request = (
            CredentialRequest.objects.select_related("session")
            .filter(session_id=session_id, call_id=call_id, session__owner=user)
            .first()
        )
        if request is None:
            raise NotFoundError("No such credential request.")
        return _answer(request, user=user, answer=answer)


def user_credentials(*, user) -> QuerySet[Credential]:
    """The credentials `user` has given, most recently changed first."""
    return Credential.objects.filter(owner=user)


def revoke_credential(*, user, credential_id) -> None:
    """Forget one of `user`'s credentials: the next tool that needs it asks again."""
    if not str(credential_id).isdigit():
        raise NotFoundError("No such credential.")
    deleted, _ = Credential.objects.filter(pk=int(credential_id), owner=user).delete()
    if not deleted:
        raise NotFoundError("No such credential.")


def _answer(request: CredentialRequest, *, user, answer: Mapping[str, str]) -> Run:
    locked = CredentialRequest.objects.select_for_update().get(pk=request.pk)
    if locked.status != CredentialRequest.Status.PENDING:
        raise AuthRequestAnswered()
    credential = build_credential(locked, answer)
    row = store_credential(
        owner_id=user.pk,
        app_name=request.session.app_name,
        key=locked.credential_key,
        scheme=locked.scheme,
        credential=credential,
        agent=locked.agent,
        tool_name=locked.tool_name,
    )
    # The Run's message names the sealed row; the secret is put back in memory
    # when the Run starts (agents.adk.credentials.ahydrate_message).
    reply = types.FunctionResponse(
        id=locked.call_id, name=AUTH_CALL, response={CREDENTIAL_REF: row.pk}
    )
    run = start.start_function_response(
        session=request.session, user=user, responses=[reply]
    )
    locked.status = CredentialRequest.Status.ANSWERED
    locked.answer_run = run
    locked.answered_at = timezone.now()
    locked.save(update_fields=["status", "answer_run", "answered_at"])
    return run


def build_credential(
    request: CredentialRequest, answer: Mapping[str, str]
) -> AuthCredential:
    """The AuthCredential the request's scheme calls for, from the answer's fields."""
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
        oauth2 = OAuth2Auth(
            access_token=_needed(answer, "access_token", scheme),
            refresh_token=answer.get("refresh_token") or None,
        )
        return AuthCredential(auth_type=kind, oauth2=oauth2)
    raise UnsupportedScheme(scheme)


def _http_credential(
    request: CredentialRequest, answer: Mapping[str, str]
) -> AuthCredential:
    http_scheme = str(request.auth_config.get("auth_scheme", {}).get("scheme") or "")
    if http_scheme.lower() == "basic":
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
