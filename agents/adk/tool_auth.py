"""ToolAuthPlugin: ADK's REST tools get the user's credential from Credential rows.

ADK's RestApiTool (every operation of an imported OpenAPI spec, and the toolsets
ADK builds on it) prepares its credential with ToolAuthHandler. That handler never
asks the credential service: it looks in session state under its own cache key
(ToolContextCredentialStore, a key ending in `_existing_exchanged_credential`),
then in the invocation's auth response, else asks the user, and caches what it got
in session state. So the token sat in the stored state and the event's
`state_delta`, and a later session asked again.

Before such a tool runs, this plugin puts the user's credential for the tool's
AuthConfig in that cache key: the answer given in this invocation, else the one
DjangoCredentialService holds sealed for the user (stored when she answered), else
nothing, so the tool asks. The session service keeps the cache key in memory only
(agents.redaction.is_credential_state). Set for every call, the cache key always
holds this tool's own credential, never one another API's tool left there.
"""

from typing import Any

from google.adk.auth.auth_credential import AuthCredential
from google.adk.auth.auth_tool import AuthConfig
from google.adk.plugins import BasePlugin
from google.adk.tools import BaseTool, ToolContext
from google.adk.tools.openapi_tool.openapi_spec_parser.rest_api_tool import (
    RestApiTool,
)
from google.adk.tools.openapi_tool.openapi_spec_parser.tool_auth_handler import (
    ToolContextCredentialStore,
)

PLUGIN_NAME = "toolcrib_tool_auth"


class ToolAuthPlugin(BasePlugin):
    """Hands ADK's REST tools the user's stored credential, in memory only."""

    def __init__(self, name: str = PLUGIN_NAME) -> None:
        super().__init__(name)

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict | None:
        """Set the tool's credential cache to the user's credential; never answers."""
        if not isinstance(tool, RestApiTool) or tool.auth_scheme is None:
            return None
        config = auth_config_of(tool)
        credential = tool_context.get_auth_response(
            config
        ) or await tool_context.load_credential(config)
        store = ToolContextCredentialStore(tool_context)
        key = store.get_credential_key(tool.auth_scheme, tool.auth_credential)
        cached = _dumped(credential)
        if tool_context.state.get(key) != cached:
            tool_context.state[key] = cached
        return None


def auth_config_of(tool: RestApiTool) -> AuthConfig:
    """The AuthConfig the tool asks with (ToolAuthHandler builds it the same way)."""
    return AuthConfig(
        auth_scheme=tool.auth_scheme,
        raw_auth_credential=tool.auth_credential,
        credential_key=tool.credential_key,
    )


def _dumped(credential: AuthCredential | None) -> dict[str, Any] | None:
    # ToolContextCredentialStore stores and reads this dump.
    return credential.model_dump(exclude_none=True) if credential else None
