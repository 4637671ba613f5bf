"""Personal access tokens to the gateway over `/api/gateway/tokens/`: made (shown
once), listed and revoked by their owner only, stored as digests."""

import pytest
from knox.crypto import hash_token

from toolsets import personal_tokens as tokens
from toolsets.models import GatewayToken, Toolset

pytestmark = pytest.mark.django_db

URL = "/api/gateway/tokens/"


@pytest.fixture
def toolsets(db):
    return [Toolset.objects.create(name=name) for name in ("math", "webpage")]


def test_a_token_is_shown_once_and_stored_as_a_digest(alice, api_for, toolsets):
    made = api_for(alice).post(
        URL, {"name": "my IDE", "toolsets": ["math"]}, format="json"
    )

    assert made.status_code == 201, made.content
    body = made.json()
    token = body["token"]
    assert tokens.TOKEN_FORMAT.fullmatch(token)
    assert (body["name"], body["toolsets"]) == ("my IDE", ["math"])
    assert token.startswith(body["prefix"])
    row = GatewayToken.objects.get()
    assert row.digest == hash_token(token) and token not in row.digest
    listed = api_for(alice).get(URL).json()
    assert [t["id"] for t in listed] == [body["id"]]
    assert "token" not in listed[0]
    assert listed[0]["expires_at"] is not None


def test_a_token_opens_its_users_toolsets_only(alice, toolsets):
    issued = tokens.issue_token(user=alice, name="ci", toolsets=["webpage"])

    found = tokens.lookup(token=issued.token)

    assert (found.user, found.toolsets) == (alice, frozenset({"webpage"}))
    # One character changed (never to itself) is another token.
    changed = "1" if issued.token.endswith("0") else "0"
    assert tokens.lookup(token=issued.token[:-1] + changed) is None


def test_unknown_toolsets_and_bad_bodies_are_400(alice, api_for, toolsets):
    client = api_for(alice)

    unknown = client.post(URL, {"name": "x", "toolsets": ["nope"]}, format="json")
    empty = client.post(URL, {"name": "x", "toolsets": []}, format="json")
    too_long = client.post(
        URL,
        {"name": "x", "toolsets": ["math"], "expires_in_days": 9999},
        format="json",
    )

    assert unknown.status_code == 400 and "nope" in str(unknown.json())
    assert empty.status_code == 400 and "toolsets" in empty.json()
    assert too_long.status_code == 400 and "expires_in_days" in too_long.json()
    assert not GatewayToken.objects.exists()


def test_another_user_can_neither_see_nor_revoke_a_token(alice, bob, api_for, toolsets):
    issued = tokens.issue_token(user=alice, name="mine", toolsets=["math"])

    assert api_for(bob).get(URL).json() == []
    refused = api_for(bob).delete(f"{URL}{issued.row.pk}/")

    assert refused.status_code == 404
    assert tokens.lookup(token=issued.token) is not None


def test_a_revoked_token_opens_nothing(alice, api_for, toolsets):
    issued = tokens.issue_token(user=alice, name="old", toolsets=["math"])

    revoked = api_for(alice).delete(f"{URL}{issued.row.pk}/")

    assert revoked.status_code == 204
    assert tokens.lookup(token=issued.token) is None
    assert api_for(alice).get(URL).json() == []


def test_signed_out_callers_get_nothing(client, toolsets):
    assert client.get(URL).status_code in (401, 403)
