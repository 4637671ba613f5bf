"""The gateway takes only access tokens its provider issued for it: a token the same
provider issued for another resource (RFC 8707: a server that got one cannot replay
it here), or one naming the gateway but from another issuer, is refused (401); an
MCP session opened with one user's access token is not another's."""

from tests.toolsets.gateway import test_oauth as live

# The live gateway with OAuth on, and its provider (tests/toolsets/gateway/test_oauth.py).
oauth_gateway = live.oauth_gateway

LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def test_a_token_issued_for_another_resource_is_refused(oauth_gateway):
    issued = live.issue_token(
        oauth_gateway, "alice", resource=live.ELSEWHERE, scope=live.SCOPE
    )

    answer = live.initialize(oauth_gateway, issued["access_token"])

    assert answer.status_code == 401
    assert "for another resource" in answer.json()["detail"]


def test_a_token_from_another_issuer_is_refused(oauth_gateway):
    forged = live.forge(oauth_gateway, iss="https://issuer.example")

    answer = live.initialize(oauth_gateway, forged)

    assert answer.status_code == 401
    assert "not issued by" in answer.json()["detail"]


def test_her_session_is_not_his(oauth_gateway):
    resource = oauth_gateway.resource
    alice = live.issue_token(oauth_gateway, "alice", resource=resource, scope="mcp")
    bob = live.issue_token(oauth_gateway, "bob", resource=resource, scope="mcp")
    opened = live.initialize(oauth_gateway, alice["access_token"])

    answer = live.post_in_session(
        oauth_gateway, LIST, bob["access_token"], opened.headers["mcp-session-id"]
    )

    assert answer.status_code == 404
