"""Secret values out of what Toolcrib stores and shows: auth payloads, state, logs,
and the tool-call audit. One rule, is_secret_key(), decides for all of them.

Pure Python (no ADK, no Django models): settings' LOGGING loads the log filter
before any app is ready.
"""

import logging
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

REDACTED = "[redacted]"
# Every secret field of ADK's AuthCredential (api key, HTTP, OAuth2, service
# account), compared without case and underscores so camelCase dumps match too.
SECRET_FIELDS = frozenset(
    {
        "apikey",
        "password",
        "token",
        "clientsecret",
        "authcode",
        "authresponseuri",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "codeverifier",
        "privatekey",
        "privatekeyid",
        "additionalheaders",
        "serviceaccountcredential",
    }
)
# Any other key whose name ends so names a secret too ("openai_api_key",
# "x-api-key", "db_password", "github_token", "Authorization", "basic_auth"), the
# same way the tool-call audit always read them. Endings, not substrings: an
# AuthConfig's "auth_scheme", "token_url" and "credential_key", an event's "author"
# and usage's "prompt_token_count" or "max_tokens" are not secrets, and the session
# page needs them.
SECRET_ENDINGS = (
    "secret",
    "secrets",
    "password",
    "passwords",
    "passwd",
    "passphrase",
    "token",
    "apikey",
    "privatekey",
    "auth",
    "authorization",
    "authheader",
    "credential",
    "credentials",
)
# A mapping under a credential's name is a credential object (ADK's
# raw_auth_credential, HttpAuth.credentials): shown with its own secret fields
# hidden, so a client still sees its type, client id and sign-in URL.
CREDENTIAL_ENDINGS = ("credential", "credentials")


# ADK's ToolContextCredentialStore key for a REST tool's credential (current and
# legacy forms both end so).
CREDENTIAL_STATE_SUFFIX = "_existing_exchanged_credential"
# An AuthCredential's type field, as ADK dumps it (snake_case or camelCase).
CREDENTIAL_TYPE_FIELDS = frozenset({"auth_type", "authType"})


# Values with nothing inside to redact, told apart by their exact type before the
# abstract Mapping's slower isinstance.
LEAVES = frozenset({str, int, float, bool, type(None)})


def redact_secrets(value: Any) -> Any:
    """A copy of nested dicts and lists with the value of every secret field replaced."""
    if type(value) in LEAVES:
        return value
    if isinstance(value, Mapping):
        return {key: _redacted_value(key, item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_secrets(item) for item in value]
    return value


def is_secret_key(key: Any) -> bool:
    """True if a key names a secret: the one rule for state, events, logs and audit."""
    name = _normalized(key)
    return name in SECRET_FIELDS or name.endswith(SECRET_ENDINGS)


def _redacted_value(key: Any, item: Any) -> Any:
    # An empty value holds no secret, and callers compare a redacted copy with the
    # original to learn whether anything secret is there at all.
    if item in (None, "", {}) or not is_secret_key(key):
        return redact_secrets(item)
    if isinstance(item, Mapping) and _is_credential_object(key):
        return redact_secrets(item)
    return REDACTED


def _is_credential_object(key: Any) -> bool:
    name = _normalized(key)
    return name not in SECRET_FIELDS and name.endswith(CREDENTIAL_ENDINGS)


def _normalized(key: Any) -> str:
    return _normalized_text(key if type(key) is str else str(key))


# The same few keys come by again and again (a span's attributes, a tool's
# arguments, state): each text's name is kept, the most recent KEPT_KEYS.
KEPT_KEYS = 4096


@lru_cache(maxsize=KEPT_KEYS)
def _normalized_text(key: str) -> str:
    # A state key's scope prefix ("user:api_key") does not hide its name, nor do
    # case, underscores or dashes (camelCase dumps, HTTP header names).
    name = key.rpartition(":")[2]
    return name.replace("_", "").replace("-", "").replace(" ", "").lower()


def is_credential_state(key: str, value: Any) -> bool:
    """True for a state entry that holds a credential: kept in memory, never stored.

    ADK's REST tools (ToolAuthHandler, under every OpenAPI operation) cache the
    credential they used in session state under a key ending in
    CREDENTIAL_STATE_SUFFIX; other ADK code may put an AuthCredential (or its
    dump) under any key. Either way a secret would reach the stored state.
    """
    if str(key).endswith(CREDENTIAL_STATE_SUFFIX):
        return True
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", exclude_none=True)
    if not isinstance(value, Mapping) or not CREDENTIAL_TYPE_FIELDS & set(value):
        return False
    return redact_secrets(value) != value


def redact_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """State (or a state delta) as it may be stored in an event or shown.

    Credential entries are left out, and secret fields of the rest replaced.
    """
    kept = {k: v for k, v in state.items() if not is_credential_state(k, v)}
    return redact_secrets(kept)


class RedactSecretsFilter(logging.Filter):
    """Blank secret fields in a record's arguments (dicts, pydantic models).

    ADK logs, at DEBUG, what resumes a paused call, and so the credential a user
    just answered. Attached to the handlers in settings.LOGGING, since a logger's
    filter does not apply to its children's records.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, Mapping):
            record.args = redact_secrets(args)
        elif isinstance(args, tuple):
            record.args = tuple(_redacted_arg(arg) for arg in args)
        return True


def _redacted_arg(arg: Any) -> Any:
    if isinstance(arg, BaseModel):
        dumped = arg.model_dump(mode="json", exclude_none=True)
        redacted = redact_secrets(dumped)
        return redacted if redacted != dumped else arg
    if isinstance(arg, (Mapping, list, tuple)):
        return redact_secrets(arg)
    return arg
