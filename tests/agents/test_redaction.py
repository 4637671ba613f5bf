"""One redaction rule: the tool-call audit and the event stream hide the same secrets."""

import json
import logging

import pytest
from google.adk.events import Event as AdkEvent
from google.adk.events import EventActions

from agents.adk.auth import redacted_event
from agents.redaction import (
    REDACTED,
    SecretValues,
    is_secret_key,
    redact_secrets,
    secret_values,
)
from tests.agents.secret_agents import SECRETS
from toolsets.governance.records import summarize

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


def test_a_secret_in_a_json_text_is_redacted_at_any_depth():
    text = json.dumps({"user": "ada", "database": [{"db_password": "s3cr3t"}]})

    shown = redact_secrets({"result": text, "note": "{not json"})

    assert json.loads(shown["result"]) == {
        "user": "ada",
        "database": [{"db_password": REDACTED}],
    }
    assert shown["note"] == "{not json"
    assert redact_secrets(json.dumps({"plain": 1})) == json.dumps({"plain": 1})


def test_a_states_secret_values_are_masked_in_text_however_it_was_written():
    secret = 'p@ss "quoted" \\ ünïcode'
    state = {"user:preferences": {"theme": "dark", "db": {"db_password": secret}}}
    values = SecretValues.of(state)

    for written in (str(state), json.dumps(state), json.dumps(json.dumps(state))):
        assert "p@ss" not in values.mask(written)
    assert values.mask("theme dark, as before") == "theme dark, as before"
    assert secret_values(state) == {secret}


def test_the_longer_of_two_secrets_is_masked_whole():
    values = SecretValues.of({"token": "abc", "api_key": "abcdef"})

    assert values.mask("key abcdef, token abc") == f"key {REDACTED}, token {REDACTED}"


def test_a_log_records_secret_fields_are_redacted_whatever_handler_writes_it(caplog):
    logger = logging.getLogger("tests.redaction")

    with caplog.at_level(logging.INFO, logger="tests.redaction"):
        logger.info("called with %s", {"username": "ada", "password": "s3cr3t"})
        logger.info("answered %s", json.dumps({"session_token": "t0k3n"}))

    assert "s3cr3t" not in caplog.text and "t0k3n" not in caplog.text
    assert "'password': '[redacted]'" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_a_turns_log_lines_show_no_secret_it_met(
    vault_keeper, alice, start_session, say, caplog
):
    session = start_session(alice, vault_keeper)

    with caplog.at_level(logging.DEBUG):
        say(alice, session, "keep and sign me in")

    assert not [secret for secret in SECRETS if secret in caplog.text]
    # The tool logged its password as a bare value: the turn had noted it.
    assert "sign_in checks the password [redacted]" in caplog.text


def test_a_value_nested_too_deep_to_look_through_shows_nothing():
    deep: dict = {"password": "s3cr3t"}
    for _ in range(5000):
        deep = {"a": deep}

    assert redact_secrets(deep) == {}
    assert redact_secrets([deep]) == []
    assert secret_values(deep) == set()
