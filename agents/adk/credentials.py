"""ADK's credentials on Django: requests recorded, secrets sealed, answers re-hydrated.

A tool calls `tool_context.request_credential(auth_config)`; ADK answers the call
with an `adk_request_credential` long-running call (an `auth_request` event),
which agents.requests records as a request of kind "credential" before the event
is published. The owner's answer (agents.credentials builds it) is sealed into a
Credential row here (Fernet, key from TOOLCRIB_CREDENTIAL_KEY or SECRET_KEY) and
the resuming Run's message names that row instead of carrying the secret.

When the Run starts, ahydrate_message() puts the secret back into the function
response, in memory only: ADK's auth preprocessor reads it from the invocation's
events, stores it in `temp:` state and re-runs the tool, which reads it with
`tool_context.get_auth_response(auth_config)`. The session service stores (and
the wire shows) that event redacted (agents.adk.auth).

DjangoCredentialService is ADK's BaseCredentialService over the same rows, so a
tool's `load_credential(auth_config)` finds what the user answered in an earlier
session: asked once, reused until the user revokes it. As in ADK's own credential
services, a credential is kept per (app, user, credential key): what a user gave
one agent is never handed to another agent asking with the same key.
"""

import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.utils import timezone
from google.adk.agents.callback_context import CallbackContext
from google.adk.auth.auth_credential import AuthCredential
from google.adk.auth.auth_tool import AuthConfig
from google.adk.auth.credential_service.base_credential_service import (
    BaseCredentialService,
)
from google.genai import types

from agents.adk.auth import AUTH_CALL
from agents.models import Credential
from agents.redaction import note_secret_values
from project import sealing

logger = logging.getLogger(__name__)

# The answer's placeholder: which Credential row holds the secret.
CREDENTIAL_REF = "toolcrib_credential"
PURPOSE = "toolcrib-credentials"
VERIFIER_PURPOSE = "toolcrib-oauth2-verifier"


def seal(credential: AuthCredential) -> str:
    """The credential as an encrypted token (text)."""
    return sealing.seal(PURPOSE, credential.model_dump_json(exclude_none=True))


def unseal(sealed: str) -> AuthCredential | None:
    """The credential, or None if the key changed (the user is asked again).

    Its secrets are noted for the running turn: masked in any text it sends out.
    """
    raw = sealing.unseal(PURPOSE, sealed)
    if raw is None:
        logger.warning("a stored credential no longer decrypts; it will be asked again")
        return None
    credential = AuthCredential.model_validate_json(raw)
    note_secret_values(credential)
    return credential


def seal_code_verifier(auth_config: AuthConfig) -> str:
    """The PKCE code verifier of an OAuth2 sign-in ADK generated, encrypted; ""
    if none. Kept server-side: the request as stored and shown blanks it."""
    exchanged = auth_config.exchanged_auth_credential
    verifier = (
        exchanged.oauth2.code_verifier if exchanged and exchanged.oauth2 else None
    )
    return sealing.seal(VERIFIER_PURPOSE, verifier) if verifier else ""


def unseal_code_verifier(sealed: str) -> str | None:
    """See seal_code_verifier(); None if there is none or the key changed."""
    return sealing.unseal(VERIFIER_PURPOSE, sealed) if sealed else None


def scheme_of(auth_config: AuthConfig) -> str:
    """The auth scheme's type: apiKey, http, oauth2, openIdConnect (or "")."""
    scheme_type = getattr(auth_config.auth_scheme, "type_", None)
    return str(getattr(scheme_type, "value", scheme_type) or "")


def store_credential(
    *,
    owner_id: int,
    app_name: str,
    key: str,
    scheme: str,
    credential: AuthCredential,
    agent: str = "",
    tool_name: str = "",
) -> Credential:
    """Seal and keep `credential`: the owner's one credential for `key` in the app."""
    row, _ = Credential.objects.update_or_create(
        owner_id=owner_id,
        app_name=app_name,
        key=key,
        defaults={
            "auth_type": credential.auth_type.value,
            "scheme": scheme,
            "sealed": seal(credential),
            "agent": agent,
            "tool_name": tool_name,
        },
    )
    return row


def _owner_id(adk_user_id: str) -> int | None:
    return int(adk_user_id) if adk_user_id.isdigit() else None


class DjangoCredentialService(BaseCredentialService):
    """ADK's credential service on Credential rows: per user, sealed, revocable."""

    async def load_credential(
        self, auth_config: AuthConfig, callback_context: CallbackContext
    ) -> AuthCredential | None:
        """The user's stored credential for the config's key in this app, or None."""
        owner_id = _owner_id(callback_context.user_id)
        if owner_id is None or not auth_config.credential_key:
            return None
        rows = Credential.objects.filter(
            owner_id=owner_id,
            app_name=callback_context.session.app_name,
            key=auth_config.credential_key,
        )
        row = await rows.afirst()
        if row is None:
            return None
        await rows.aupdate(last_used_at=timezone.now())
        return unseal(row.sealed)

    async def save_credential(
        self, auth_config: AuthConfig, callback_context: CallbackContext
    ) -> None:
        """Keep the config's exchanged credential (a refreshed token, ...) for the
        user, in this app."""
        owner_id = _owner_id(callback_context.user_id)
        credential = auth_config.exchanged_auth_credential
        if owner_id is None or credential is None or not auth_config.credential_key:
            return
        await _astore(owner_id, auth_config, credential, callback_context)


async def _astore(
    owner_id: int,
    auth_config: AuthConfig,
    credential: AuthCredential,
    callback_context: CallbackContext,
) -> None:
    await sync_to_async(store_credential)(
        owner_id=owner_id,
        app_name=callback_context.session.app_name,
        key=auth_config.credential_key or "",
        scheme=scheme_of(auth_config),
        credential=credential,
        agent=callback_context.agent_name,
    )


async def ahydrate_message(
    message: types.Content, *, owner_id: int, app_name: str
) -> types.Content:
    """The Run's message with each credential answer's secret put back, in memory.

    An answer names its Credential row (CREDENTIAL_REF), which must be the owner's
    in this app; a row that is gone (revoked meanwhile) or no longer decrypts gives
    an empty answer, which ADK ignores, and the tool asks again.
    """
    parts = []
    for part in message.parts or []:
        response = part.function_response
        if response is None or response.name != AUTH_CALL:
            parts.append(part)
            continue
        ref = (response.response or {}).get(CREDENTIAL_REF)
        secret = await _unsealed(ref, owner_id=owner_id, app_name=app_name)
        answer = secret.model_dump(mode="json", exclude_none=True) if secret else {}
        parts.append(
            types.Part(
                function_response=types.FunctionResponse(
                    id=response.id, name=response.name, response=answer
                )
            )
        )
    return message.model_copy(update={"parts": parts})


async def _unsealed(ref: Any, *, owner_id: int, app_name: str) -> AuthCredential | None:
    if not isinstance(ref, int):
        return None
    rows = Credential.objects.filter(pk=ref, owner_id=owner_id, app_name=app_name)
    row = await rows.afirst()
    return unseal(row.sealed) if row else None
