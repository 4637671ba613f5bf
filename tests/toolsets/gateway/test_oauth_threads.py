"""The gateway's JWKS clients under threads: calls checking access tokens at once,
for the first time in a process, each get a client for the provider's key set,
and the process keeps one. A second client made at once is as good as the first:
it only fetches the keys once more."""

import hashlib
from dataclasses import asdict

import jwt
from django.core.cache import cache

from tests.threads import at_once
from toolsets.gateway import oauth
from toolsets.sso import discovery

ISSUER = "https://login.example.test"
JWKS = f"{ISSUER}/keys"


def test_calls_at_once_each_get_a_client_for_the_providers_key_set(
    settings, monkeypatch
):
    settings.TOOLCRIB_OIDC_ISSUER = ISSUER
    key = "sso.discovery." + hashlib.sha256(ISSUER.encode()).hexdigest()[:32]
    found = discovery.Endpoints(
        authorization=f"{ISSUER}/authorize",
        token=f"{ISSUER}/token",
        userinfo=f"{ISSUER}/userinfo",
        jwks=JWKS,
    )
    cache.set(key, asdict(found))  # as a sign-in's discovery left it
    monkeypatch.setattr(oauth, "_jwks_clients", {})

    clients = at_once(lambda i: oauth._jwks_client())

    assert all(isinstance(client, jwt.PyJWKClient) for client in clients)
    assert {client.uri for client in clients} == {JWKS}
    assert list(oauth._jwks_clients) == [JWKS]
    assert oauth._jwks_client() is oauth._jwks_clients[JWKS]
    cache.delete(key)
