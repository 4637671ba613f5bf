"""The event inspector shows an event only to its session's owner and to staff,
and never a secret: a secret-shaped argument reads redacted wherever it is shown."""

import json

import pytest

from tests.toolsets.conftest import catalog, toolcrib_settings  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def inspect(client, session: str, seq: int):
    return client.get(f"/api/sessions/{session}/events/{seq}/inspect/")


@pytest.fixture
def alices_call(catalog, alice, start_session, say, events_of):  # noqa: F811
    session = start_session(alice, "rocketeer")
    say(alice, session, "go")
    frames = events_of(alice, session)
    call = next(f for f in frames if f["event"]["kind"] == "function_call")
    return session, call["seq"]


def test_another_user_gets_404_for_alices_event(alices_call, bob, api_for):
    session, seq = alices_call

    response = inspect(api_for(bob), session, seq)

    assert response.status_code == 404
    assert response.json() == {"detail": "No such session."}


def test_staff_see_alices_event(alices_call, make_user, api_for):
    session, seq = alices_call
    staff = make_user("ops", is_staff=True)

    response = inspect(api_for(staff), session, seq)

    assert response.status_code == 200
    assert [c["status"] for c in response.json()["tool_calls"]] == ["ok"]


def test_anonymous_gets_no_event(alices_call, client):
    session, seq = alices_call

    response = client.get(f"/api/sessions/{session}/events/{seq}/inspect/")

    assert response.status_code in (401, 403)


def test_a_secret_argument_never_appears_in_the_inspector(
    catalog,  # noqa: F811
    alice,
    make_user,
    api_for,
    start_session,
    say,
    events_of,
):
    staff = make_user("ops", is_staff=True)
    created = api_for(staff).post(
        "/api/agents/",
        {
            "name": "vault",
            "instruction": "Use login to log in.",
            "toolsets": ["rockets"],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    session = start_session(alice, "vault")
    say(alice, session, "log in username=ada password=hunter2 api_token=xyz")

    frames = events_of(alice, session)
    bodies = [
        inspect(api_for(alice), session, frame["seq"]).json()
        for frame in frames
        # Not the user's words, nor the model's: free text, where no key names a
        # secret (the offline model reads the call's result out).
        if frame["event"]["kind"] in ("function_call", "function_response")
    ]

    shown = json.dumps(bodies)
    assert "hunter2" not in shown
    assert "s3cr3t" not in shown
    [call] = [c for body in bodies for c in body["tool_calls"]][:1]
    assert call["args"]["password"] == "[redacted]"
    [asked] = [b for b in bodies if b["event"]["event"]["kind"] == "function_call"]
    assert asked["event"]["event"]["function_calls"][0]["args"]["password"] == (
        "[redacted]"
    )
