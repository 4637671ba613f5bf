"""A shared session opens only what was shared, to whom it was shared, and carries
no secret: its links are its owner's, a revoked or expired link opens nothing, a
link opens to strangers only when staff allow it, the shared page and its events
show no credential or secret argument, the viewer still cannot reach the session
itself (REST or socket), and a session continued from it holds no credential."""

import json
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async as sync
from django.test import Client
from django.utils import timezone
from google.adk.auth.auth_credential import AuthCredential, AuthCredentialTypes
from rest_framework.test import APIClient

from agents.adk.credentials import store_credential
from agents.models import (
    Credential,
    Event,
    Session,
    Share,
    ShareSettings,
    ShareView,
    UserState,
)
from tests.agents.secret_agents import SECRETS, SIGN_IN_PASSWORD
from tests.agents.test_consumers import TIMEOUT, auth, close_code

pytestmark = pytest.mark.django_db(transaction=True)

STATE_KEY = "sk-live-SHARED-9f8e7d"
AGENT = "weather_sentiment"


@pytest.fixture
def mallory(make_user):
    return make_user("mallory")


@pytest.fixture
def secret_session(vault_keeper, alice, start_session, say) -> str:
    """alice's session that met a password argument, a token result and a nested
    state secret, with an API key in its session state and a credential of hers."""
    session = start_session(alice, vault_keeper)
    say(alice, session, "keep and sign me in")
    row = Session.objects.get(pk=session)
    row.state = {**row.state, "notes": "kept", "service_api_key": STATE_KEY}
    row.save(update_fields=["state"])
    store_credential(
        owner_id=alice.pk,
        app_name=vault_keeper,
        key="records",
        scheme="apiKey",
        credential=AuthCredential(
            auth_type=AuthCredentialTypes.API_KEY, api_key="cred-SECRET-4411"
        ),
    )
    return session


def share(api_for, user, session: str, **body) -> dict:
    made = api_for(user).post(f"/api/sessions/{session}/shares/", body, format="json")
    assert made.status_code == 201, made.content
    return made.json()


def test_another_user_cannot_list_create_or_revoke_a_sessions_links(
    alice, mallory, demo_agents, start_session, api_for
):
    session = start_session(alice, AGENT)
    link = share(api_for, alice, session)
    mine = api_for(mallory)

    listed = mine.get(f"/api/sessions/{session}/shares/")
    created = mine.post(f"/api/sessions/{session}/shares/", {}, format="json")
    revoked = mine.delete(f"/api/sessions/{session}/shares/{link['id']}/")
    views = mine.get(f"/api/sessions/{session}/shares/{link['id']}/views/")

    assert [listed.status_code, created.status_code] == [404, 404]
    assert [revoked.status_code, views.status_code] == [404, 404]
    assert Share.objects.filter(session_id=session).count() == 1
    assert Share.objects.get().revoked_at is None


def test_a_link_of_another_session_cannot_be_revoked_through_ones_own(
    alice, mallory, demo_agents, start_session, api_for
):
    theirs = share(api_for, alice, start_session(alice, AGENT))
    own = start_session(mallory, AGENT)

    answer = api_for(mallory).delete(f"/api/sessions/{own}/shares/{theirs['id']}/")

    assert answer.status_code == 404
    assert Share.objects.get(pk=theirs["id"]).revoked_at is None


def test_staff_may_revoke_but_not_share_someone_elses_session(
    alice, make_user, demo_agents, start_session, api_for
):
    staff = make_user("root", is_staff=True)
    session = start_session(alice, AGENT)
    link = share(api_for, alice, session)

    created = api_for(staff).post(f"/api/sessions/{session}/shares/", {}, format="json")
    revoked = api_for(staff).delete(f"/api/sessions/{session}/shares/{link['id']}/")

    assert created.status_code == 403
    assert revoked.status_code == 204
    assert APIClient().get(f"/api/shared/{link['token']}/events/").status_code == 410


def test_the_token_is_stored_only_as_a_digest(
    alice, demo_agents, start_session, api_for
):
    link = share(api_for, alice, start_session(alice, AGENT))

    row = Share.objects.values().get()

    assert link["token"] not in json.dumps(row, default=str)
    assert len(link["token"]) == 43


def test_a_revoked_or_expired_link_shows_nothing(
    alice, bob, demo_agents, start_session, say, api_for
):
    session = start_session(alice, AGENT)
    say(alice, session, "weather in london?")
    revoked = share(api_for, alice, session)
    expired = share(api_for, alice, session, expires_in_days=1)
    api_for(alice).delete(f"/api/sessions/{session}/shares/{revoked['id']}/")
    Share.objects.filter(pk=expired["id"]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    client = Client()
    client.force_login(bob)

    for link in (revoked, expired):
        page = client.get(f"/shared/{link['token']}/")
        events = api_for(bob).get(f"/api/shared/{link['token']}/events/")
        fork = api_for(bob).post(f"/api/shared/{link['token']}/fork/")
        assert page.status_code == 410
        assert b"london" not in page.content
        assert [events.status_code, fork.status_code] == [410, 410]
        assert "london" not in events.content.decode()
    assert not ShareView.objects.exists()
    assert Session.objects.filter(owner=bob).count() == 0


def test_a_made_up_token_is_no_such_link(bob, api_for):
    client = Client()
    client.force_login(bob)

    assert client.get("/shared/" + "A" * 43 + "/").status_code == 404
    assert client.get("/shared/short/").status_code == 404
    assert api_for(bob).get("/api/shared/%00x/events/").status_code == 404


def test_anyone_cannot_open_a_link_unless_staff_allow_it(
    alice, demo_agents, start_session, say, api_for
):
    session = start_session(alice, AGENT)
    say(alice, session, "weather in london?")
    signed_in_only = share(api_for, alice, session)
    refused = api_for(alice).post(
        f"/api/sessions/{session}/shares/", {"anyone": True}, format="json"
    )
    ShareSettings.objects.create(anyone_with_link=True)
    for_anyone = share(api_for, alice, session, anyone=True)
    stranger = APIClient()

    assert refused.status_code == 400
    assert "anyone" in refused.json()
    page = Client().get(f"/shared/{signed_in_only['token']}/")
    assert page.status_code == 302 and page["Location"].startswith("/login/")
    closed = stranger.get(f"/api/shared/{signed_in_only['token']}/events/")
    assert closed.status_code == 401
    opened = stranger.get(f"/api/shared/{for_anyone['token']}/events/")
    assert opened.status_code == 200
    assert "london" in opened.content.decode()
    assert Client().get(f"/shared/{for_anyone['token']}/").status_code == 200
    # Continuing it needs an account.
    assert stranger.post(f"/api/shared/{for_anyone['token']}/fork/").status_code in (
        401,
        403,
    )

    # Staff switch it off: the link made for anyone closes to strangers at once.
    ShareSettings.objects.update(anyone_with_link=False)
    again = stranger.get(f"/api/shared/{for_anyone['token']}/events/")
    assert again.status_code == 401


def test_the_shared_events_and_page_leak_no_secret(secret_session, alice, bob, api_for):
    link = share(api_for, alice, secret_session)
    client = Client()
    client.force_login(bob)

    page = client.get(f"/shared/{link['token']}/")
    events = api_for(bob).get(f"/api/shared/{link['token']}/events/")
    about = api_for(bob).get(f"/api/shared/{link['token']}/")

    assert page.status_code == events.status_code == about.status_code == 200
    shown = page.content.decode() + events.content.decode() + about.content.decode()
    assert "sign_in" in events.content.decode()  # the calls are there, redacted
    for secret in (*SECRETS, STATE_KEY, "cred-SECRET-4411"):
        assert secret not in shown


def test_the_viewer_still_cannot_reach_the_session_itself(
    alice, bob, demo_agents, start_session, say, api_for
):
    session = start_session(alice, AGENT)
    say(alice, session, "weather in london?")
    share(api_for, alice, session)
    client = Client()
    client.force_login(bob)

    assert api_for(bob).get(f"/api/sessions/{session}/").status_code == 404
    assert api_for(bob).get(f"/api/sessions/{session}/events/").status_code == 404
    assert client.get(f"/sessions/{session}/").status_code == 404


async def test_the_viewers_socket_to_the_shared_session_is_still_refused(
    alice, bob, demo_agents, start_session, api_for
):
    from channels.testing import WebsocketCommunicator

    from project.asgi import application

    session = await sync(start_session)(alice, AGENT)
    await sync(share)(api_for, alice, session)

    socket = WebsocketCommunicator(
        application, f"/ws/sessions/{session}/", headers=await sync(auth)(bob)
    )
    connected, _ = await socket.connect(timeout=TIMEOUT)

    assert connected  # accepted, then closed: no such session for bob
    assert await close_code(socket) == 4404
    await socket.disconnect()


def test_a_continued_session_carries_no_credential_or_secret(
    secret_session, alice, bob, api_for
):
    link = share(api_for, alice, secret_session)

    forked = api_for(bob).post(f"/api/shared/{link['token']}/fork/")

    assert forked.status_code == 201, forked.content
    copy = Session.objects.get(pk=forked.json()["id"])
    assert copy.owner == bob and copy.agent.name == "vault_keeper"
    assert not Credential.objects.filter(owner=bob).exists()
    assert copy.state == {"notes": "kept"}
    stored = json.dumps([row.data for row in Event.objects.filter(session=copy)])
    assert "sign_in" in stored  # the conversation is there, for the model
    for secret in (*SECRETS, STATE_KEY, "cred-SECRET-4411"):
        assert secret not in stored
    # The original kept what it stored, for its own turns.
    original = Event.objects.filter(session_id=secret_session)
    assert SIGN_IN_PASSWORD in json.dumps([row.data for row in original])
    # Her `user:` state (a nested password) stays hers.
    assert not UserState.objects.filter(user_id=str(bob.pk)).exists()
