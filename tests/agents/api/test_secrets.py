"""What the REST API shows of a turn that met secrets: its events and its state,
each value a secret-named key holds redacted, at any depth (agents/redaction.py)."""

import json

import pytest

from agents.models import Event
from tests.agents.secret_agents import DB_PASSWORD, SECRETS, SIGN_IN_PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)

REDACTED = "[redacted]"


def calls_named(frames: list[dict], name: str) -> list[dict]:
    return [
        call
        for frame in frames
        for call in frame["event"]["function_calls"]
        if call["name"] == name
    ]


def test_a_password_argument_is_redacted_in_the_rest_events(
    vault_keeper, alice, start_session, say, events_of
):
    session = start_session(alice, vault_keeper)
    say(alice, session, "keep and sign me in")

    frames = events_of(alice, session)

    assert [call["args"] for call in calls_named(frames, "sign_in")] == [
        {"username": "ada", "password": REDACTED}
    ]
    (result,) = [
        r
        for f in frames
        for r in f["event"]["function_responses"]
        if r["name"] == "sign_in"
    ]
    assert result["response"] == {
        "status": "signed in",
        "note": "checked by the vault keeper",
    }
    (delta,) = [f["event"]["state_delta"] for f in frames if f["event"]["state_delta"]]
    assert delta["user"]["preferences"]["database"] == {
        "host": "db.internal",
        "db_password": REDACTED,
    }
    assert not [secret for secret in SECRETS if secret in json.dumps(frames)]
    # Stored as the model wrote it: ADK sends the call to the model again, and
    # runs an approved call with these arguments; only what leaves is redacted.
    stored = Event.objects.filter(session_id=session, kind="function_call")
    assert SIGN_IN_PASSWORD in json.dumps([row.data for row in stored])


def test_a_nested_secret_in_state_is_redacted_by_the_state_api(
    vault_keeper, alice, start_session, say, api_for
):
    session = start_session(alice, vault_keeper)
    say(alice, session, "keep and sign me in")

    state = api_for(alice).get(f"/api/sessions/{session}/state/").json()

    assert state["user"]["preferences"] == {
        "theme": "dark",
        "database": {"host": "db.internal", "db_password": REDACTED},
    }
    assert DB_PASSWORD not in json.dumps(state)
