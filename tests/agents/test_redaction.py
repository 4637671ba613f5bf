"""One redaction rule: the tool-call audit and the event stream hide the same secrets."""

import json

import pytest
from google.adk.events import Event as AdkEvent
from google.adk.events import EventActions

from agents.adk.auth import redacted_event
from agents.redaction import REDACTED, is_secret_key, redact_secrets
from toolsets.governance.plugin import summarize

# Each shape one of the two old rules missed: the audit's substring pattern, or
# the stream's exact AuthCredential fields.
SECRET_KEYS = [
    "password",
    "db_passwd",
    "client_secret",
    "api_token",
    "user:github_token",
    "apiKey",
    "X-API-Key",
    "Authorization",
    "basic_auth",
    "private_key",
    "credentials",
    "auth_code",
    "code_verifier",
    "additional_headers",
    "service_account_credential",
]
# Names the session page reads from an auth request, or that only look secret.
PLAIN_KEYS = [
    "author",
    "auth_type",
    "auth_uri",
    "token_url",
    "credential_key",
    "prompt_token_count",
    "max_tokens",
    "username",
]


def _stream(delta: dict) -> dict:
    event = AdkEvent(author="agent", actions=EventActions(state_delta=delta))
    return redacted_event(event).actions.state_delta


def _audit(result: dict) -> dict:
    return json.loads(summarize(result))


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_the_audit_and_the_event_stream_hide_the_same_secret(key):
    secret = {key: "s3cr3t"}

    assert is_secret_key(key)
    assert _audit(secret) == {key: REDACTED}
    assert _stream(secret) == {key: REDACTED}


@pytest.mark.parametrize("key", PLAIN_KEYS)
def test_a_plain_key_stays_in_the_audit_and_the_stream(key):
    # A secret beside it makes the stream redact the delta at all.
    delta = {key: "shown", "password": "s3cr3t"}

    assert not is_secret_key(key)
    assert _audit(delta) == {key: "shown", "password": REDACTED}
    assert _stream(delta) == {key: "shown", "password": REDACTED}


def test_a_credential_object_keeps_its_shape_but_not_its_secrets():
    credential = {
        "auth_type": "oauth2",
        "oauth2": {"client_id": "app", "client_secret": "s3cr3t", "auth_uri": "u"},
    }
    hidden = {
        "auth_type": "oauth2",
        "oauth2": {"client_id": "app", "client_secret": REDACTED, "auth_uri": "u"},
    }

    assert redact_secrets({"raw_auth_credential": credential}) == {
        "raw_auth_credential": hidden
    }
    assert redact_secrets({"credential": "s3cr3t"}) == {"credential": REDACTED}
