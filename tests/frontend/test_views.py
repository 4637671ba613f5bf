"""The pages: who may open them, and that each one loads its module."""

import re

import pytest

from agents.sessions import create_session

PAGES = ["/", "/inbox/", "/overview/", "/tokens/"]
SESSION_PAGE = "/sessions/some-session-id/"
STAFF_PAGES = [
    "/staff/access/",
    "/staff/audit/",
    "/staff/firehose/",
    "/staff/agents/",
    "/staff/groups/",
    "/staff/notices/",
    "/staff/people/",
    "/staff/changes/",
]


@pytest.mark.parametrize("path", [*PAGES, SESSION_PAGE, *STAFF_PAGES])
def test_signed_out_visitors_go_to_the_login_page(client, path):
    response = client.get(path)

    assert response.status_code == 302
    assert response["Location"] == f"/login/?next={path}"


@pytest.mark.parametrize("path", PAGES)
def test_a_signed_in_user_gets_the_page_and_its_module(client, alice, path):
    client.force_login(alice)

    response = client.get(path)

    assert response.status_code == 200
    assert re.search(
        rb'<script type="module" src="/static/frontend/\w+\.js">', response.content
    )
    assert b'name="csrf-token"' in response.content


@pytest.mark.parametrize("path", STAFF_PAGES)
def test_staff_pages_refuse_other_users_readably(client, alice, path):
    client.force_login(alice)

    response = client.get(path)

    assert response.status_code == 403
    assert b"This page is for staff" in response.content


@pytest.mark.parametrize("path", STAFF_PAGES)
def test_staff_get_the_staff_pages(client, make_user, path):
    client.force_login(make_user("boss", is_staff=True))

    assert client.get(path).status_code == 200


@pytest.fixture
def alices_session(alice, demo_agents):
    return create_session(user=alice, agent=demo_agents["weather_sentiment"]).id


def test_the_session_page_carries_the_session_id_for_its_module(
    client, alice, alices_session
):
    client.force_login(alice)

    response = client.get(f"/sessions/{alices_session}/")

    assert response.status_code == 200
    assert re.search(
        rb'<script type="module" src="/static/frontend/\w+\.js">', response.content
    )
    assert f'data-session="{alices_session}"'.encode() in response.content


def test_the_session_page_has_a_toolsets_panel_for_its_module(
    client, alice, alices_session
):
    client.force_login(alice)

    content = client.get(f"/sessions/{alices_session}/").content.decode()

    for element in ('id="toolsets"', 'id="toolsets-count"', 'id="toolsets-note"'):
        assert element in content
    assert 'aria-labelledby="toolsets-title"' in content


def test_the_home_and_a_session_page_carry_the_sessions_sidebar(
    client, alice, alices_session
):
    client.force_login(alice)

    home = client.get("/").content.decode()
    session = client.get(f"/sessions/{alices_session}/").content.decode()
    inbox = client.get("/inbox/").content.decode()

    for page in (home, session):
        assert 'id="sidebar"' in page
        assert '<a class="skip-link" href="#sidebar">Skip to sessions</a>' in page
    assert '<a class="skip-link" href="#main">Skip to conversation</a>' in session
    assert f'data-current="{alices_session}"' in session
    assert "data-current" not in home
    assert 'id="sidebar"' not in inbox  # pages of their own keep the whole width
    assert "Skip to sessions" not in inbox


def test_the_access_page_finds_users_through_the_api_not_the_template(
    client, make_user
):
    boss = make_user("boss", is_staff=True)
    make_user("carol")
    client.force_login(boss)

    response = client.get("/staff/access/")

    content = response.content.decode()
    assert 'id="user-search"' in content
    assert 'id="matrix-pager"' in content
    # 200 users are a page at a time from /api/users/, not all in the page.
    assert "carol" not in content
    assert 'id="subjects"' not in content


def test_sign_in_and_out_with_the_login_form(client, make_user):
    make_user("carol", password="secret")

    signed_in = client.post("/login/", {"username": "carol", "password": "secret"})
    home = client.get("/")
    signed_out = client.post("/logout/")

    assert signed_in.status_code == 302
    assert signed_in["Location"] == "/"
    assert home.status_code == 200
    assert signed_out["Location"] == "/login/"
    assert client.get("/").status_code == 302


def test_a_wrong_password_says_so(client, make_user):
    make_user("carol", password="secret")

    response = client.post("/login/", {"username": "carol", "password": "nope"})

    assert response.status_code == 200
    assert b"didn't match" in response.content


@pytest.mark.parametrize("path", PAGES)
def test_every_page_carries_the_inbox_count_and_its_live_module(client, alice, path):
    client.force_login(alice)

    content = client.get(path).content.decode()

    assert '<script type="module" src="/static/frontend/inboxfeed.js">' in content
    assert re.search(r'id="nav-inbox"[^>]*>Inbox <span id="inbox-count"', content)


def test_the_login_page_opens_no_inbox_socket(client):
    content = client.get("/login/").content.decode()

    assert "inboxfeed.js" not in content
    assert 'id="inbox-count"' not in content


def test_the_inbox_page_has_both_lists_and_asks_to_notify_only_from_a_button(
    client, alice
):
    client.force_login(alice)

    content = client.get("/inbox/").content.decode()

    for element in ('id="requests-waiting"', 'id="requests-mine"', 'id="notify-me"'):
        assert element in content
