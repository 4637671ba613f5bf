"""The OAuth 2.0 authorization server of the OAuth2 credential tests, and the tool
that signs in with it.

The server is tests/oidc/oauth2_server.mjs (the npm package oidc-provider, which
scripts/ensure-oidc-provider.sh installs) as a subprocess on 127.0.0.1: a real
authorization endpoint, token endpoint (authorization code and refresh token
grants) and userinfo endpoint. Missing, a test skips; on CI it fails
(tests.oidc.provider.require_provider).
"""

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from fastapi.openapi.models import OAuth2, OAuthFlowAuthorizationCode, OAuthFlows
from google.adk.auth.auth_credential import (
    AuthCredential,
    AuthCredentialTypes,
    OAuth2Auth,
)
from google.adk.auth.auth_tool import AuthConfig
from google.adk.tools.authenticated_function_tool import AuthenticatedFunctionTool

from tests.live.server import free_port, stop, wait_for_port
from tests.oidc.provider import FOLDER, require_provider

SCRIPT = FOLDER / "oauth2_server.mjs"
CLIENT_ID = "toolcrib-tools"
CLIENT_SECRET = "toolcrib-tools-test-secret"
ACCOUNT = "alice-at-provider"
CREDENTIAL_KEY = "test-provider"
# The tool a settings toolset names ("tests.agents.oauth2_server.PROFILE"), built
# for the running server by the tests' fixture.
PROFILE: AuthenticatedFunctionTool | None = None


@dataclass
class AuthorizationServer:
    port: int

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def auth_config(self) -> AuthConfig:
        """What a tool of this provider asks for: ADK's OAuth2 authorization code
        flow, with the client's id and secret in the tool's own configuration."""
        flow = OAuthFlowAuthorizationCode(
            authorizationUrl=f"{self.issuer}/auth",
            tokenUrl=f"{self.issuer}/token",
            scopes={"openid": "who you are", "offline_access": "stay signed in"},
        )
        return AuthConfig(
            auth_scheme=OAuth2(flows=OAuthFlows(authorizationCode=flow)),
            raw_auth_credential=AuthCredential(
                auth_type=AuthCredentialTypes.OAUTH2,
                # PKCE, which the server's policy requires of every client.
                oauth2=OAuth2Auth(
                    client_id=CLIENT_ID,
                    client_secret=CLIENT_SECRET,
                    code_challenge_method="S256",
                ),
            ),
            credential_key=CREDENTIAL_KEY,
        )

    def profile_tool(self) -> AuthenticatedFunctionTool:
        """read_profile as ADK documents an authenticated tool: it runs with a
        credential its credential manager loads, refreshes or asks for."""
        userinfo = f"{self.issuer}/me"

        def read_profile(credential: AuthCredential) -> dict:
            """Read the signed-in user's profile at the provider."""
            token = credential.oauth2.access_token
            answer = httpx.get(
                userinfo, headers={"Authorization": f"Bearer {token}"}, timeout=10
            )
            return {"status": answer.status_code, "profile": answer.json()}

        return AuthenticatedFunctionTool(
            func=read_profile, auth_config=self.auth_config()
        )


@contextmanager
def running_server(
    *, redirect_uris: list[str], folder: Path
) -> Iterator[AuthorizationServer]:
    """The server, listening until the block ends."""
    node = require_provider()
    port = free_port()
    env = {
        **os.environ,
        "OAUTH2_PORT": str(port),
        "OAUTH2_ACCOUNT": ACCOUNT,
        "OAUTH2_CLIENT": json.dumps(
            {
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
                "redirect_uris": redirect_uris,
            }
        ),
    }
    with (folder / "oauth2_server.log").open("wb") as log:
        process = subprocess.Popen(
            [node, str(SCRIPT)], cwd=FOLDER, env=env, stdout=log, stderr=log
        )
    try:
        wait_for_port(port, process)
        yield AuthorizationServer(port=port)
    finally:
        stop(process)
