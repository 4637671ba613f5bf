"""Secret values out of everything that leaves Toolcrib: events (REST, sockets),
state, traces (stored and exported), logs and the tool-call audit.

One rule, is_secret_key(), names the secrets; it is applied two ways
(docs/permissions.md, "Secrets: one redaction rule"):

- In data (dicts, lists, and text holding a JSON object or array), the value of
  every secret-named key is replaced, at any depth: redact_secrets().
- In text (an instruction ADK rendered state into, a log line, a span attribute),
  the values a turn knows to be secret (the leaves redact_secrets() would hide, in
  the state it rendered, the arguments it called tools with, the credentials it
  loaded) are replaced wherever they appear, as written or escaped the way repr()
  and JSON write them: SecretValues, noted per turn (turn_secrets()).

Pure Python (no ADK, no Django models): the log records' redaction is installed
before any turn runs (agents.apps).
"""

import contextlib
import json
import logging
import re
import threading
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
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
# abstract Mapping's slower isinstance. A text is data when it holds JSON.
LEAVES = frozenset({int, float, bool, type(None)})
# How a text holding a JSON object or array starts (as json.dumps writes one).
JSON_OPENERS = ("{", "[")


def redact_secrets(value: Any) -> Any:
    """A copy of nested dicts, lists and JSON texts with the value of every secret
    field replaced; one nested too deep to look through shows nothing."""
    try:
        return _redacted(value)
    except RecursionError:
        if isinstance(value, Mapping):
            return {}
        return [] if isinstance(value, (list, tuple)) else REDACTED


def _redacted(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return _redacted_json_text(value) if value[:1] in JSON_OPENERS else value
    if kind in LEAVES:
        return value
    if isinstance(value, Mapping):
        return {key: _redacted_value(key, item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted(item) for item in value]
    return value


def _redacted_json_text(text: str) -> str:
    # A dict serialized into a text (ADK's span attributes, a tool's JSON answer)
    # is still the dict; any other text is words. Kept as it was unless a secret
    # was in it.
    data = _json_data(text)
    if not isinstance(data, (dict, list)):
        return text
    redacted = _redacted(data)
    if redacted == data:
        return text
    return json.dumps(redacted, ensure_ascii=False)


def is_secret_key(key: Any) -> bool:
    """True if a key names a secret: the one rule for state, events, logs and audit."""
    name = _normalized(key)
    return name in SECRET_FIELDS or name.endswith(SECRET_ENDINGS)


def _redacted_value(key: Any, item: Any) -> Any:
    if _holds_no_secret(key, item):
        return _redacted(item)
    return REDACTED


def _holds_no_secret(key: Any, item: Any) -> bool:
    """Whether a key's value is shown (its own secret fields redacted): a plain
    key's, an empty one, a credential object's; else the whole value is hidden."""
    # An empty value holds no secret, and callers compare a redacted copy with the
    # original to learn whether anything secret is there at all.
    if item in (None, "", {}) or not is_secret_key(key):
        return True
    return isinstance(item, Mapping) and _is_credential_object(key)


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


# Secret values in text: a turn's, noted as it goes.


def secret_values(value: Any) -> set[str]:
    """The texts of the leaves redact_secrets() hides in a value, at any depth
    (those found above a nesting too deep to look through)."""
    found: set[str] = set()
    try:
        _collect_secrets(value, found)
    except RecursionError:
        pass  # what is below is never shown: redact_secrets() shows nothing
    return found


def _collect_secrets(value: Any, found: set[str]) -> None:
    kind = type(value)
    if kind is str:
        if value[:1] in JSON_OPENERS:
            _collect_secrets(_json_data(value), found)
        return
    if kind in LEAVES:
        return
    if isinstance(value, BaseModel):  # an ADK object in state (a credential)
        value = value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, Mapping):
        for key, item in value.items():
            if _holds_no_secret(key, item):
                _collect_secrets(item, found)
            else:
                _collect_leaves(item, found)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect_secrets(item, found)


def _collect_leaves(value: Any, found: set[str]) -> None:
    """Every text and number of a hidden value: all of it is secret."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        for item in value:
            _collect_leaves(item, found)
    elif isinstance(value, str):
        if value and value != REDACTED:
            found.add(value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        found.add(str(value))


def _json_data(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def written_forms(value: str) -> set[str]:
    """A secret as text may carry it: as it is, and escaped as JSON and repr()
    write it, twice over (a repr'd dict inside a JSON text: ADK's llm_request)."""
    forms = {value}
    for _ in range(2):
        forms |= {
            escaped
            for form in list(forms)
            for escaped in (
                json.dumps(form)[1:-1],
                json.dumps(form, ensure_ascii=False)[1:-1],
                repr(form)[1:-1],
            )
        }
    return {form for form in forms if form}


class SecretValues:
    """Secret values, masked wherever they appear in a text: a turn's (noted as it
    goes, read by threads of the turn: note() under a lock) or a state's."""

    def __init__(self) -> None:
        self._forms: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    @classmethod
    def of(cls, value: Any) -> "SecretValues":
        """The secret values in a value (see secret_values())."""
        values = cls()
        values.note(value)
        return values

    def note(self, value: Any) -> None:
        """Add the secret values found in a value, at any depth."""
        found = secret_values(value)
        if not found:
            return
        forms = set().union(*(written_forms(text) for text in found))
        with self._lock:
            if forms <= self._forms:
                return
            self._forms |= forms
            # Longest first: a secret that contains another is masked whole; one
            # pass, so a mask is never masked again.
            ordered = sorted(self._forms, key=len, reverse=True)
            self._pattern = re.compile("|".join(map(re.escape, ordered)))

    def mask(self, text: str) -> str:
        """The text with every secret value in it replaced."""
        pattern = self._pattern
        return text if pattern is None else pattern.sub(REDACTED, text)

    def __bool__(self) -> bool:
        return self._pattern is not None


_turn_secrets: ContextVar[SecretValues | None] = ContextVar(
    "toolcrib_turn_secrets", default=None
)


@contextlib.contextmanager
def turn_secrets() -> Iterator[SecretValues]:
    """The secret values of the turn running in this context (its tasks and
    threads share them), from here to the end of the block."""
    values = SecretValues()
    token = _turn_secrets.set(values)
    try:
        yield values
    finally:
        _turn_secrets.reset(token)


def note_secret_values(value: Any) -> None:
    """Note the secret values in a value for the running turn, if one is."""
    values = _turn_secrets.get()
    if values is not None:
        values.note(value)


def mask_turn_secrets(text: str) -> str:
    """The text without the running turn's secret values (as it is outside one)."""
    values = _turn_secrets.get()
    return values.mask(text) if values else text


def redact_outgoing(value: Any) -> Any:
    """A value as it may leave during a turn: secret fields redacted at any depth,
    and the turn's secret values masked in every text left."""
    redacted = redact_secrets(value)
    values = _turn_secrets.get()
    return _masked(redacted, values) if values else redacted


def _masked(value: Any, values: SecretValues) -> Any:
    if isinstance(value, str):
        return values.mask(value)
    if isinstance(value, Mapping):
        return {key: _masked(item, values) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_masked(item, values) for item in value]
    return value


# Logs: every record, whichever handler writes it.

_log_lock = threading.Lock()
_log_factory_installed = False


def install_log_redaction() -> None:
    """Redact every log record as it is made (idempotent): secret fields of its
    arguments (dicts, pydantic models), and the running turn's secret values in
    its text. A record factory, not a handler's filter: an operator's handlers,
    and pytest's, get the redacted record too.

    ADK logs, at DEBUG, what resumes a paused call (the credential a user just
    answered), and the model request it sends (the instruction, state rendered
    into it).
    """
    global _log_factory_installed
    with _log_lock:
        if _log_factory_installed:
            return
        _log_factory_installed = True
        made = logging.getLogRecordFactory()

        def redacted_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = made(*args, **kwargs)
            redact_record(record)
            return record

        logging.setLogRecordFactory(redacted_record)


def redact_record(record: logging.LogRecord) -> None:
    """Blank a record's secrets in place (see install_log_redaction())."""
    args = record.args
    if isinstance(args, Mapping):
        record.args = redact_secrets(args)
    elif isinstance(args, tuple):
        record.args = tuple(_redacted_arg(arg) for arg in args)
    values = _turn_secrets.get()
    if not values:
        return
    try:
        message = record.getMessage()
    except (TypeError, ValueError, KeyError):
        return  # a bad format: the handler reports it, as without redaction
    masked = values.mask(message)
    if masked != message:
        record.msg, record.args = masked, ()


def _redacted_arg(arg: Any) -> Any:
    if isinstance(arg, BaseModel):
        dumped = arg.model_dump(mode="json", exclude_none=True)
        redacted = redact_secrets(dumped)
        return redacted if redacted != dumped else arg
    if isinstance(arg, (Mapping, list, tuple, str)):
        return redact_secrets(arg)
    return arg
