"""Password guessing is cut short per account and address, on the API and the page,
and nobody can lock another person out of her account.

Issue 14, Low 10: `/api/auth/token/` and `/login/` let anyone guess passwords as fast as
the server answered. Then the attackers' findings: ten wrong passwords locked the
account for everyone (the right password too, from any address) and the whole source
address for every account. Now the (account, address) pair is locked; an address
that fails far more often, over any accounts, is locked for all of them.
"""

import time
from datetime import timedelta

import pytest

pytestmark = pytest.mark.django_db

LIMIT = 4
ADDRESS_LIMIT = 10
COOLOFF = timedelta(minutes=15)
ATTACKER = "203.0.113.7"
ELSEWHERE = "198.51.100.20"


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.TOOLCRIB_LOGIN_ADDRESS_FAILURE_LIMIT = ADDRESS_LIMIT
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


def assert_locked_out_json(response, *, whole_address: bool = False) -> None:
    assert response.status_code == 429, response.content
    detail = response.json()["detail"]
    assert "too many failed sign-in attempts" in detail.lower()
    assert "15 minutes" in detail
    assert ("for any account" in detail) is whole_address


def signs_in(response) -> bool:
    return response.status_code == 200 and bool(response.json()["token"])


def test_wrong_passwords_for_one_account_lock_it_from_that_address(client, accounts):
    answers = [api_login(client, "alice", "guess").status_code for _ in range(LIMIT)]

    assert answers == [400] * (LIMIT - 1) + [429]
    assert_locked_out_json(api_login(client, "alice", "alice-pw"))


def test_the_owner_still_signs_in_from_another_address(client, accounts):
    for _ in range(LIMIT):
        api_login(client, "alice", "guess")

    assert signs_in(api_login(client, "alice", "alice-pw", address=ELSEWHERE))
    assert page_login(client, "alice", "alice-pw", address=ELSEWHERE).status_code == 302


def test_others_still_sign_in_from_the_guessing_address(client, accounts):
    for _ in range(LIMIT):
        api_login(client, "alice", "guess")

    assert signs_in(api_login(client, "bob", "bob-pw"))
    assert page_login(client, "bob", "bob-pw").status_code == 302


def test_guesses_from_many_addresses_lock_each_address_alone(client, accounts):
    guessers = [f"192.0.2.{n}" for n in range(3)]
    for address in guessers:
        for _ in range(LIMIT):
            api_login(client, "alice", "guess", address=address)

    assert all(
        api_login(client, "alice", "alice-pw", address=a).status_code == 429
        for a in guessers
    )
    assert signs_in(api_login(client, "alice", "alice-pw", address=ELSEWHERE))


def test_one_address_spraying_many_accounts_is_locked_for_all(client, accounts):
    for n in range(ADDRESS_LIMIT):
        api_login(client, f"someone{n}", "guess")

    assert_locked_out_json(api_login(client, "bob", "bob-pw"), whole_address=True)
    page = page_login(client, "bob", "bob-pw")
    assert page.status_code == 429
    assert "for any account" in page.content.decode()
    assert signs_in(api_login(client, "bob", "bob-pw", address=ELSEWHERE))


def test_spraying_below_the_address_limit_locks_no_other_account(client, accounts):
    for n in range(ADDRESS_LIMIT - 1):
        api_login(client, f"someone{n}", "guess")

    assert signs_in(api_login(client, "bob", "bob-pw"))


def test_the_address_limit_can_be_switched_off(client, accounts, settings):
    settings.TOOLCRIB_LOGIN_ADDRESS_FAILURE_LIMIT = 0
    for n in range(ADDRESS_LIMIT * 2):
        api_login(client, f"someone{n}", "guess")

    assert signs_in(api_login(client, "bob", "bob-pw"))


def test_a_forged_forwarded_for_header_does_not_reset_the_count(client, accounts):
    for n in range(LIMIT):
        api_login(client, "alice", "guess", HTTP_X_FORWARDED_FOR=f"10.9.9.{n}")

    locked = api_login(client, "alice", "alice-pw", HTTP_X_FORWARDED_FOR="10.9.9.200")

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
    assert page_login(client, "alice", "alice-pw", address=ELSEWHERE).status_code == 302


def test_the_page_and_the_api_share_one_count(client, accounts):
    for _ in range(LIMIT - 1):
        page_login(client, "alice", "guess")

    assert api_login(client, "alice", "guess").status_code == 429
    assert page_login(client, "bob", "bob-pw").status_code == 302
