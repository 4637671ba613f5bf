"""OAuth2 authorization-code credentials, against a real authorization server.

A tool asks for an OAuth2 credential; its request offers the provider's sign-in
URL; the user follows it, the provider sends the browser back to Toolcrib's
callback, the code is exchanged and the tokens kept sealed; a later session uses
them, and once they expire they are refreshed at the provider.
"""

import json
import time
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest
from django.test import Client

from agents.adk.credentials import seal, unseal
from agents.models import AgentSpec, Credential, Event, Request, Run
from agents.turns.start import wait_for_run
from tests.agents import oauth2_server
from tests.agents.oauth2_server import (
    ACCOUNT,
    CLIENT_SECRET,
    CREDENTIAL_KEY,
    running_server,
)

pytestmark = pytest.mark.django_db(transaction=True)

CALLBACK = "http://testserver/api/oauth2/callback/"
AGENT = "profile-reader"
ASK = "read my profile"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(
        redirect_uris=[CALLBACK], folder=tmp_path_factory.mktemp("oauth2")
    ) as running:
        oauth2_server.PROFILE = running.profile_tool()
        yield running
        oauth2_server.PROFILE = None


@pytest.fixture
def agent(server, settings):
    settings.TOOLCRIB_TOOLSETS = {
        **settings.TOOLCRIB_TOOLSETS,
        "provider": "tests.agents.oauth2_server.PROFILE",
    }
    AgentSpec.objects.create(
        name=AGENT,
        model="offline/demo",
        instruction="When the user asks to read their profile, use read_profile.",
        toolsets=["provider"],
    )
    return AGENT


def sign_in(authorization_url: str) -> str:
    """Play the browser at the provider: follow its redirects until it sends the
    browser back to Toolcrib; that URL."""
    with httpx.Client(timeout=10) as browser:
        url = authorization_url
        for _ in range(10):
            answer = browser.get(url)
            assert answer.is_redirect, answer.text
            url = urljoin(url, answer.headers["location"])
            if url.startswith(CALLBACK):
                return url
    raise AssertionError("the provider never sent the browser back")


def come_back(user, url: str):
    """The browser, signed in to Toolcrib, arriving at the callback."""
    browser = Client()
    browser.force_login(user)
    parts = urlsplit(url)
    return browser.get(f"{parts.path}?{parts.query}")


def resumed_run(session_id: str) -> Run:
    run = Run.objects.filter(session_id=session_id).order_by("-created_at").first()
    return wait_for_run(run=run, timeout=30)


def tool_results(events_of, user, session_id: str) -> list[dict]:
    """What read_profile answered in the session, in order (pauses left out)."""
    return [
        response["response"]
        for frame in events_of(user, session_id)
        for response in frame["event"]["function_responses"]
        if response["name"] == "read_profile" and "profile" in response["response"]
    ]


def pending_request(api_for, user) -> dict:
    [asked] = api_for(user).get("/api/auth-requests/?status=pending").json()
    return asked


def stored_credential(user) -> tuple[Credential, object]:
    row = Credential.objects.get(owner=user, app_name=AGENT, key=CREDENTIAL_KEY)
    return row, unseal(row.sealed)


@pytest.fixture
def signed_in(agent, alice, start_session, say, api_for, events_of):
    """Alice asked, signed in at the provider and came back: her first session."""
    session = start_session(alice, agent)
    run = say(alice, session, ASK)
    assert (run["status"], run["waiting_for"]) == ("waiting", "credential")
    asked = pending_request(api_for, alice)
    back = sign_in(asked["authorization_url"])

    arrived = come_back(alice, back)

    assert arrived.status_code == 302
    assert arrived["Location"] == f"/sessions/{session}/"
    assert resumed_run(session).status == Run.Status.SUCCEEDED
    return session, asked, back


def test_the_request_offers_the_providers_sign_in_with_our_callback(
    agent, alice, start_session, say, api_for, server
):
    session = start_session(alice, agent)
    say(alice, session, ASK)

    asked = pending_request(api_for, alice)
    url = urlsplit(asked["authorization_url"])
    query = parse_qs(url.query)
    [inbox_entry] = api_for(alice).get("/api/requests/").json()

    assert f"{url.scheme}://{url.netloc}{url.path}" == f"{server.issuer}/auth"
    assert query["redirect_uri"] == [CALLBACK]
    assert query["client_id"] == ["toolcrib-tools"]
    assert query["response_type"] == ["code"]
    assert query["state"][0]
    assert inbox_entry["authorization_url"] == asked["authorization_url"]
    assert CLIENT_SECRET not in json.dumps(asked)


def test_signing_in_runs_the_tool_with_a_token_the_provider_accepts(
    signed_in, alice, events_of
):
    session, _, _ = signed_in

    [result] = tool_results(events_of, alice, session)

    assert result == {"status": 200, "profile": {"sub": ACCOUNT}}


def test_the_tokens_are_kept_sealed_and_never_in_the_session(signed_in, alice):
    session, _, back = signed_in
    code = parse_qs(urlsplit(back).query)["code"][0]

    row, credential = stored_credential(alice)

    tokens = [credential.oauth2.access_token, credential.oauth2.refresh_token]
    assert all(tokens)
    for secret in [*tokens, code]:
        assert secret not in row.sealed
        assert not Event.objects.filter(
            session_id=session, data__icontains=secret
        ).exists()
    assert Request.objects.get(session_id=session).status == Request.Status.ANSWERED


def test_a_later_session_uses_the_tokens_without_asking(
    signed_in, alice, start_session, say, events_of
):
    session = start_session(alice, AGENT)

    run = say(alice, session, ASK)

    assert run["status"] == "succeeded"
    assert tool_results(events_of, alice, session)[0]["profile"] == {"sub": ACCOUNT}
    assert not Request.objects.filter(session_id=session).exists()


def test_expired_tokens_are_refreshed_at_the_provider(
    signed_in, alice, start_session, say, events_of
):
    row, credential = stored_credential(alice)
    before = credential.oauth2.access_token
    credential.oauth2.expires_at = int(time.time()) - 3600  # an hour later
    Credential.objects.filter(pk=row.pk).update(sealed=seal(credential))
    session = start_session(alice, AGENT)

    run = say(alice, session, ASK)

    assert run["status"] == "succeeded"
    assert tool_results(events_of, alice, session)[0]["status"] == 200
    _, refreshed = stored_credential(alice)
    assert refreshed.oauth2.access_token != before
    assert refreshed.oauth2.expires_at > time.time()


def test_a_state_no_request_waits_for_is_refused(agent, alice):
    arrived = come_back(alice, f"{CALLBACK}?code=abc&state=nobody-asked")

    assert arrived.status_code == 404
    assert not Run.objects.exists()


def test_only_the_owner_completes_her_sign_in(
    agent, alice, bob, start_session, say, api_for
):
    session = start_session(alice, agent)
    say(alice, session, ASK)
    back = sign_in(pending_request(api_for, alice)["authorization_url"])

    arrived = come_back(bob, back)

    assert arrived.status_code in {403, 404}
    assert Request.objects.get(session_id=session).status == Request.Status.PENDING


def test_a_refused_sign_in_leaves_the_request_waiting(
    agent, alice, start_session, say, api_for
):
    session = start_session(alice, agent)
    say(alice, session, ASK)
    state = parse_qs(
        urlsplit(pending_request(api_for, alice)["authorization_url"]).query
    )["state"][0]

    arrived = come_back(alice, f"{CALLBACK}?error=access_denied&state={state}")

    assert arrived.status_code == 400
    assert "access_denied" in arrived.content.decode()
    assert Request.objects.get(session_id=session).status == Request.Status.PENDING
