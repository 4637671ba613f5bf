"""A person's theme and language (docs/i18n.md): stored by /api/me/preferences/,
spoken by the pages, the API's refusals and the sockets' error frames.

Her chosen language wins in her browser (a session cookie); "auto" is the
browser's Accept-Language; a token's request speaks its own Accept-Language.
"""

import pytest
from asgiref.sync import sync_to_async as sync

from agents.models import UserPreference
from tests.agents.test_consumers import TIMEOUT, auth, open_socket

PREFERENCES = "/api/me/preferences/"
CLOSED_DE = "Diese Sitzung ist geschlossen"
CLOSED_EN = "This session is closed"
AGENT = "weather_sentiment"


@pytest.fixture
def web_client(client):
    """A browser's client: signed in with a session cookie, as the pages are."""

    def signed_in(user):
        client.force_login(user)
        return client

    return signed_in


@pytest.fixture
def closed_session(alice, demo_agents, start_session, api_for) -> str:
    session = start_session(alice, AGENT)
    assert api_for(alice).post(f"/api/sessions/{session}/close/").status_code == 200
    return session


def test_preferences_start_as_the_systems_theme_and_the_browsers_language(
    alice, web_client
):
    body = web_client(alice).get(PREFERENCES).json()

    assert (body["theme"], body["language"]) == ("system", "auto")
    assert {"code": "de", "name": "Deutsch"} in body["languages"]


def test_a_change_is_stored_and_what_is_left_out_stays(alice, web_client):
    client = web_client(alice)

    changed = client.patch(
        PREFERENCES, {"theme": "dark"}, content_type="application/json"
    )
    assert changed.status_code == 200
    again = client.patch(
        PREFERENCES, {"language": "de"}, content_type="application/json"
    )

    assert (again.json()["theme"], again.json()["language"]) == ("dark", "de")
    row = UserPreference.objects.get(user=alice)
    assert (row.theme, row.language) == ("dark", "de")


@pytest.mark.parametrize(
    "body, field",
    [
        ({"theme": "purple"}, "theme"),
        ({"language": "xx"}, "language"),
        ({"language": 3}, "language"),
        ({"colour": "dark"}, "colour"),
    ],
)
def test_a_bad_choice_is_a_400_naming_its_field(alice, web_client, body, field):
    refused = web_client(alice).patch(
        PREFERENCES, body, content_type="application/json"
    )

    assert refused.status_code == 400
    assert field in refused.json()
    assert not UserPreference.objects.filter(user=alice).exists()


def test_another_persons_preferences_are_not_touched(alice, bob, web_client):
    web_client(alice).patch(
        PREFERENCES, {"theme": "dark"}, content_type="application/json"
    )

    assert web_client(bob).get(PREFERENCES).json()["theme"] == "system"
    assert not UserPreference.objects.filter(user=bob).exists()


def test_preferences_need_a_signed_in_person(client):
    assert client.get(PREFERENCES).status_code in (401, 403)


def test_a_german_choice_gives_german_pages_and_a_german_lang(alice, web_client):
    client = web_client(alice)
    english = client.get("/").content.decode()
    assert '<html lang="en"' in english and "Your sessions" in english

    client.patch(PREFERENCES, {"language": "de"}, content_type="application/json")
    german = client.get("/").content.decode()

    assert '<html lang="de"' in german
    assert "Ihre Sitzungen" in german and "Abmelden" in german
    assert "Your sessions" not in german


def test_a_german_choice_wins_over_the_browsers_english(alice, web_client):
    client = web_client(alice)
    client.patch(PREFERENCES, {"language": "de"}, content_type="application/json")

    page = client.get("/", HTTP_ACCEPT_LANGUAGE="en-US,en;q=0.9").content.decode()

    assert "Ihre Sitzungen" in page


def test_automatic_speaks_the_browsers_language(alice, web_client):
    client = web_client(alice)

    german = client.get("/", HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9,en;q=0.5")
    english = client.get("/", HTTP_ACCEPT_LANGUAGE="fr-FR,en;q=0.5")

    assert "Ihre Sitzungen" in german.content.decode()
    assert "Your sessions" in english.content.decode()


def test_the_sign_in_page_speaks_the_browsers_language(client):
    page = client.get("/login/", HTTP_ACCEPT_LANGUAGE="de").content.decode()

    assert '<html lang="de"' in page and "Bei Toolcrib anmelden" in page


def test_a_rest_refusal_speaks_her_language(alice, web_client, closed_session):
    client = web_client(alice)
    client.patch(PREFERENCES, {"language": "de"}, content_type="application/json")

    refused = client.post(
        f"/api/sessions/{closed_session}/messages/",
        {"text": "hi"},
        content_type="application/json",
    )
    missing = client.get("/api/sessions/no-such-session/")

    assert refused.status_code == 409
    assert refused.json()["detail"].startswith(CLOSED_DE)
    assert missing.json() == {"detail": "Diese Sitzung gibt es nicht."}


def test_a_rest_refusal_under_automatic_speaks_accept_language(
    alice, web_client, closed_session, api_for
):
    browser = web_client(alice).post(
        f"/api/sessions/{closed_session}/messages/",
        {"text": "hi"},
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE="de",
    )
    token = api_for(alice).post(
        f"/api/sessions/{closed_session}/messages/",
        {"text": "hi"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="de-AT",
    )
    plain = api_for(alice).post(
        f"/api/sessions/{closed_session}/messages/", {"text": "hi"}, format="json"
    )

    assert browser.json()["detail"].startswith(CLOSED_DE)
    assert token.json()["detail"].startswith(CLOSED_DE)
    assert plain.json()["detail"].startswith(CLOSED_EN)


def test_a_field_error_speaks_her_language_too(alice, web_client):
    client = web_client(alice)
    client.patch(PREFERENCES, {"language": "de"}, content_type="application/json")

    refused = client.patch(
        PREFERENCES, {"language": "xx"}, content_type="application/json"
    )

    assert refused.json()["language"][0].startswith("Geben Sie eines davon an")


def test_the_javascript_catalog_is_served_in_the_active_language(client):
    german = client.get("/jsi18n/?lang=de", HTTP_ACCEPT_LANGUAGE="de")
    english = client.get("/jsi18n/?lang=en", HTTP_ACCEPT_LANGUAGE="en")

    assert german.status_code == english.status_code == 200
    assert "django.gettext" in german.content.decode()
    assert german["Content-Type"].startswith("text/javascript")
    assert "max-age=3600" in german["Cache-Control"]


def test_the_theme_is_rendered_on_the_page_before_any_script(alice, web_client):
    client = web_client(alice)
    assert "data-theme" not in client.get("/").content.decode().split(">", 2)[1]

    client.patch(PREFERENCES, {"theme": "dark"}, content_type="application/json")
    page = client.get("/").content.decode()

    assert '<html lang="en" data-theme="dark">' in page
    assert '<meta name="color-scheme" content="dark">' in page
    assert page.index("/jsi18n/") < page.index('type="module"')


@pytest.mark.django_db(transaction=True)
async def test_a_socket_signed_in_by_her_cookie_speaks_her_language(
    alice, closed_session, client
):
    await sync(UserPreference.objects.create)(user=alice, language="de")
    await sync(client.force_login)(alice)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    headers = [
        (b"host", b"localhost:8000"),
        (b"origin", b"http://localhost:8000"),
        (b"cookie", cookie),
        (b"accept-language", b"en"),
    ]
    socket = await open_socket(f"/ws/sessions/{closed_session}/", headers)

    await socket.send_json_to({"type": "message", "text": "hi", "ref": "m1"})
    refused = await _error_frame(socket)

    assert refused["error"]["code"] == "session_closed"
    assert refused["error"]["message"].startswith(CLOSED_DE)
    await socket.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_tokens_socket_speaks_its_accept_language(alice, closed_session):
    await sync(UserPreference.objects.create)(user=alice, language="de")
    english = await open_socket(
        f"/ws/sessions/{closed_session}/", await sync(auth)(alice)
    )
    german = await open_socket(
        f"/ws/sessions/{closed_session}/",
        [*await sync(auth)(alice), (b"accept-language", b"de-CH, en;q=0.5")],
    )

    for socket in (english, german):
        await socket.send_json_to({"type": "message", "text": "hi"})
    said_en = (await _error_frame(english))["error"]["message"]
    said_de = (await _error_frame(german))["error"]["message"]

    assert said_en.startswith(CLOSED_EN)
    assert said_de.startswith(CLOSED_DE)
    await english.disconnect()
    await german.disconnect()


async def _error_frame(socket) -> dict:
    """The next error frame: the replayed `session_closed` event comes first."""
    while True:
        frame = await socket.receive_json_from(timeout=TIMEOUT)
        if "error" in frame:
            return frame
