"""The ID token at /oidc/callback/ is checked as OpenID Connect Core §3.1.3.7 asks,
and one that fails a check sends her back to the sign-in page saying why, never to
a server error.

An ID token whose audience lists Toolcrib among others was issued to the client
its `azp` names: with several audiences `azp` must be there and be Toolcrib's
client id, and whenever it is there it must be. An expired token, an unsigned one
(`alg: none`) and one signed with another key are refused.

The real test provider (tests/oidc) runs the flow; the test hands it the ID token
to return (signed with the provider's own key unless the case says otherwise)."""

import time
from collections.abc import Iterator

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth import get_user_model

from tests.oidc.flow import (
    CALLBACK,
    at_provider,
    back_at_toolcrib,
    nonce_of,
    start,
    use_provider,
)
from tests.oidc.provider import CLIENT_ID, Provider, running_provider

pytestmark = pytest.mark.django_db

OTHER_CLIENT = "another-client"


def private_jwk() -> dict:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = jwt.algorithms.RSAAlgorithm.to_jwk(key, as_dict=True)
    jwk.pop("key_ops")
    return {**jwk, "kid": "test", "use": "sig", "alg": "RS256"}


PROVIDER_KEY = private_jwk()


@pytest.fixture(scope="module")
def provider(tmp_path_factory) -> Iterator[Provider]:
    folder = tmp_path_factory.mktemp("oidc-id-tokens")
    with running_provider(
        redirect_uris=[CALLBACK], folder=folder, signing_key=PROVIDER_KEY
    ) as running:
        yield running


@pytest.fixture
def sso(provider, settings) -> Provider:
    use_provider(settings, provider)
    provider.set_account(
        "erin", password="erin-pw", claims={"preferred_username": "erin"}
    )
    return provider


def sign_in_with(
    client, provider: Provider, *, key=PROVIDER_KEY, alg="RS256", **claims
):
    """erin signs in at the provider, which returns an ID token with these claims
    (over a valid set) to Toolcrib."""
    url = start(client)
    now = int(time.time())
    body = {
        "iss": provider.issuer,
        "sub": "erin",
        "aud": CLIENT_ID,
        "iat": now,
        "exp": now + 300,
        "nonce": nonce_of(url),
        **claims,
    }
    body = {name: value for name, value in body.items() if value is not None}
    if alg == "none":
        token = jwt.encode(body, None, algorithm="none")
    else:
        private = jwt.algorithms.RSAAlgorithm.from_jwk(key)
        token = jwt.encode(body, private, algorithm=alg, headers={"kid": "test"})
    provider.replace_next_id_token(token)
    return back_at_toolcrib(
        client, at_provider(provider, url, login="erin", password="erin-pw")
    )


def assert_refused_saying(client, landed, words: str) -> None:
    assert landed.status_code == 302
    assert landed["Location"] == "/login/?sso=failed"
    assert "_auth_user_id" not in client.session
    assert not get_user_model().objects.filter(username="erin").exists()
    page = client.get(landed["Location"])
    assert page.status_code == 200
    assert words in page.content.decode()


def test_a_token_for_several_audiences_issued_to_another_client_is_refused(client, sso):
    landed = sign_in_with(client, sso, aud=[CLIENT_ID, OTHER_CLIENT], azp=OTHER_CLIENT)

    assert_refused_saying(client, landed, "issued to another client")


def test_a_token_for_several_audiences_without_azp_is_refused(client, sso):
    landed = sign_in_with(client, sso, aud=[CLIENT_ID, OTHER_CLIENT])

    assert_refused_saying(client, landed, "no authorized party (azp)")


def test_a_token_whose_azp_is_another_client_is_refused(client, sso):
    landed = sign_in_with(client, sso, azp=OTHER_CLIENT)

    assert_refused_saying(client, landed, "issued to another client")


def test_a_token_for_several_audiences_issued_to_toolcrib_signs_in(client, sso):
    landed = sign_in_with(client, sso, aud=[CLIENT_ID, OTHER_CLIENT], azp=CLIENT_ID)

    assert landed["Location"] == "/inbox/"
    assert client.session["_auth_user_id"]


def test_an_expired_token_shows_the_sign_in_page_saying_so(client, sso):
    now = int(time.time())

    landed = sign_in_with(client, sso, iat=now - 3600, exp=now - 600)

    assert_refused_saying(client, landed, "has expired")


def test_a_token_without_an_expiry_is_refused(client, sso):
    landed = sign_in_with(client, sso, exp=None)

    assert_refused_saying(client, landed, "no expiry")


def test_an_unsigned_token_shows_the_sign_in_page_saying_so(client, sso):
    landed = sign_in_with(client, sso, alg="none")

    assert_refused_saying(client, landed, "not signed with RS256")


def test_a_token_signed_with_another_key_shows_the_sign_in_page_saying_so(client, sso):
    landed = sign_in_with(client, sso, key=private_jwk())

    assert_refused_saying(client, landed, "signature is not the provider")


def test_a_token_for_another_nonce_is_refused(client, sso):
    landed = sign_in_with(client, sso, nonce="replayed")

    assert_refused_saying(client, landed, "did not pass its checks")
