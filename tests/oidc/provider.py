"""The OpenID Connect provider the sign-in tests run: provider.mjs (the npm package
oidc-provider) as a subprocess on 127.0.0.1, with accounts in a JSON file a test may
rewrite between two sign-ins.

scripts/ensure-oidc-provider.sh installs it (`npm ci`); scripts/test.sh and
`make test-browser` call that first. Missing, a test skips, but on CI
(TOOLCRIB_REQUIRE_SERVICES) it fails.
"""

import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.live.server import free_port, wait_for_port

FOLDER = Path(__file__).resolve().parent
SCRIPT = FOLDER / "provider.mjs"
INSTALLED = FOLDER / "node_modules" / "oidc-provider" / "package.json"
CLIENT_ID = "toolcrib"
CLIENT_SECRET = "toolcrib-test-client-secret"


def require_provider() -> str:
    """The node binary, or a skip (a failure on CI) saying how to install it."""
    node = shutil.which("node")
    if node and INSTALLED.exists():
        return node
    message = (
        "the test OpenID Connect provider is not installed: run "
        "scripts/ensure-oidc-provider.sh (node and npm, then npm ci in tests/oidc)"
    )
    if os.environ.get("TOOLCRIB_REQUIRE_SERVICES") or os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@dataclass
class Provider:
    port: int
    accounts_file: Path
    next_id_token_file: Path

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set_account(self, login: str, *, password: str, claims: Mapping) -> None:
        """Add or change an account: its next sign-in carries these claims."""
        accounts = json.loads(self.accounts_file.read_text())
        accounts[login] = {"password": password, "claims": dict(claims)}
        self.accounts_file.write_text(json.dumps(accounts))

    def remove_account(self, login: str) -> None:
        """Delete an account: its refresh tokens are refused from now on."""
        accounts = json.loads(self.accounts_file.read_text())
        accounts.pop(login)
        self.accounts_file.write_text(json.dumps(accounts))

    def replace_next_id_token(self, id_token: str) -> None:
        """The next token response carries this ID token instead of its own."""
        self.next_id_token_file.write_text(id_token)

    def settings_env(self) -> dict[str, str]:
        """Toolcrib's environment for signing in with this provider."""
        return {
            "TOOLCRIB_OIDC_ISSUER": self.issuer,
            "TOOLCRIB_OIDC_CLIENT_ID": CLIENT_ID,
            "TOOLCRIB_OIDC_CLIENT_SECRET": CLIENT_SECRET,
            "TOOLCRIB_OIDC_SCOPES": "openid email profile groups",
            "TOOLCRIB_OIDC_PROVIDER_NAME": "Test ID",
        }


@contextmanager
def running_provider(
    *,
    redirect_uris: list[str],
    folder: Path,
    resources: Mapping[str, Mapping] | None = None,
    signing_key: Mapping | None = None,
) -> Iterator[Provider]:
    """The provider, listening until the block ends.

    `resources`: the resource servers it issues JWT access tokens for
    (provider.mjs, OIDC_RESOURCES); `signing_key`: its private JWK, when a test
    must sign tokens the way it does.
    """
    node = require_provider()
    accounts = folder / "accounts.json"
    accounts.write_text("{}")
    next_id_token = folder / "next-id-token"
    next_id_token.unlink(missing_ok=True)
    port = free_port()
    env = {
        **os.environ,
        "OIDC_PORT": str(port),
        "OIDC_ACCOUNTS": str(accounts),
        "OIDC_CLIENT": json.dumps(
            {
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
                "redirect_uris": redirect_uris,
            }
        ),
        "OIDC_RESOURCES": json.dumps(dict(resources or {})),
        "OIDC_NEXT_ID_TOKEN": str(next_id_token),
    }
    if signing_key is not None:
        env["OIDC_SIGNING_KEY"] = json.dumps(dict(signing_key))
    with (folder / "provider.log").open("wb") as log:
        process = subprocess.Popen(
            [node, str(SCRIPT)], cwd=FOLDER, env=env, stdout=log, stderr=log
        )
    try:
        wait_for_port(port, process)
        yield Provider(
            port=port, accounts_file=accounts, next_id_token_file=next_id_token
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
