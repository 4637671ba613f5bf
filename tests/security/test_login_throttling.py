"""Password guessing is cut short: per account and per client address, on the API and the page.

Issue 14, Low 10: `/api/auth/token/` and `/login/` let anyone guess passwords as fast as
the server answered.
"""

import time
from datetime import timedelta

import pytest

pytestmark = pytest.mark.django_db

LIMIT = 4
COOLOFF = timedelta(minutes=15)
ATTACKER = "203.0.113.7"
BYSTANDER = "198.51.100.20"


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.AXES_COOLOFF_TIME = COOLOFF


@pytest.fixture
def accounts(make_user):
    return {name: make_user(name, password=f"{name}-pw") for name in ("alice", "bob")}


def api_login(client, username: str, password: str, address: str = ATTACKER, **extra):
    return client.post(
        "/api/auth/token/",
        {"username": username, "password": password},
        content_type="application/json",
        REMOTE_ADDR=address,
        **extra,
    )


def page_login(client, username: str, password: str, address: str = ATTACKER):
    return client.post(
        "/login/",
        {"username": username, "password": password},
        REMOTE_ADDR=address,
    )


def assert_locked_out_json(response) -> None:
    assert response.status_code == 429, response.content
    detail = response.json()["detail"]
    assert "too many failed sign-in attempts" in detail.lower()
    assert "15 minutes" in detail


def test_wrong_passwords_for_one_account_lock_it_on_the_api(client, accounts):
    answers = [api_login(client, "alice", "guess").status_code for _ in range(LIMIT)]

    assert answers == [400] * (LIMIT - 1) + [429]
    assert_locked_out_json(api_login(client, "alice", "alice-pw"))


def test_a_locked_account_stays_locked_from_another_address(client, accounts):
    for address in (f"192.0.2.{n}" for n in range(LIMIT)):
        api_login(client, "alice", "guess", address=address)

    assert_locked_out_json(api_login(client, "alice", "alice-pw", address=BYSTANDER))


def test_other_accounts_and_addresses_are_unaffected(client, accounts):
    for _ in range(LIMIT):
        api_login(client, "alice", "guess")

    bob = api_login(client, "bob", "bob-pw", address=BYSTANDER)

    assert bob.status_code == 200
    assert bob.json()["token"]


def test_one_address_guessing_across_many_accounts_is_locked(client, accounts):
    for n in range(LIMIT):
        api_login(client, f"someone{n}", "guess")

    assert_locked_out_json(api_login(client, "bob", "bob-pw"))
    assert api_login(client, "bob", "bob-pw", address=BYSTANDER).status_code == 200


def test_a_forged_forwarded_for_header_does_not_reset_the_count(client, accounts):
    for n in range(LIMIT):
        api_login(client, f"someone{n}", "guess", HTTP_X_FORWARDED_FOR=f"10.9.9.{n}")

    locked = api_login(client, "bob", "bob-pw", HTTP_X_FORWARDED_FOR="10.9.9.200")

    assert_locked_out_json(locked)


def test_the_lock_ends_after_the_cool_off(client, accounts, settings):
    settings.AXES_COOLOFF_TIME = timedelta(seconds=2)
    for _ in range(LIMIT):
        api_login(client, "alice", "guess")
    assert api_login(client, "alice", "alice-pw").status_code == 429

    time.sleep(2.1)

    assert api_login(client, "alice", "alice-pw").status_code == 200


def test_wrong_passwords_on_the_sign_in_page_lock_it(client, accounts):
    answers = [page_login(client, "alice", "guess").status_code for _ in range(LIMIT)]

    assert answers == [200] * (LIMIT - 1) + [429]
    locked = page_login(client, "alice", "alice-pw")
    assert locked.status_code == 429
    page = locked.content.decode()
    assert "Too many failed sign-in attempts" in page
    assert "15 minutes" in page
    assert "_auth_user_id" not in client.session


def test_the_page_and_the_api_share_one_count(client, accounts):
    for n in range(LIMIT - 1):
        page_login(client, "alice", "guess", address=f"192.0.2.{n}")

    assert api_login(client, "alice", "guess", address=BYSTANDER).status_code == 429
    assert page_login(client, "bob", "bob-pw", address=BYSTANDER).status_code == 302
