"""Secret values out of what Toolcrib shows: auth payloads and log records.

Pure Python (no ADK, no Django models): settings' LOGGING loads the log filter
before any app is ready.
"""

import logging
from collections.abc import Mapping
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


def redact_secrets(value: Any) -> Any:
    """A copy of nested dicts and lists with the value of every secret field replaced."""
    if isinstance(value, Mapping):
        return {key: _redacted_value(key, item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_secrets(item) for item in value]
    return value


def _redacted_value(key: Any, item: Any) -> Any:
    if item in (None, "", {}) or not _is_secret(key):
        return redact_secrets(item)
    return REDACTED


def _is_secret(key: Any) -> bool:
    return str(key).replace("_", "").lower() in SECRET_FIELDS


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
