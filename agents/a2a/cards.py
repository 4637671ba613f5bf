"""An agent's A2A card: who it is, what it can do, and how a caller proves who
she is (docs/a2a.md)."""

from typing import Any

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentProvider,
    AgentSkill,
    HTTPAuthSecurityScheme,
    OpenIdConnectSecurityScheme,
    SecurityScheme,
)
from django.conf import settings
from google.adk.tools.base_toolset import BaseToolset
from google.adk.workflow import BaseNode

from agents.adk.builder import AgentBuildError, agent_for
from agents.adk.nodes import node_tools, walk
from agents.models import AgentSpec

PROTOCOL_VERSION = "0.3.0"
TEXT = ["text/plain"]
API_TOKEN = "toolcribToken"
OIDC = "openIdConnect"


def agent_card(*, spec: AgentSpec, url: str) -> AgentCard:
    """The card of an agent served at `url` (its JSON-RPC endpoint)."""
    description = spec.description or f"The Toolcrib agent {spec.name}."
    schemes = security_schemes()
    return AgentCard(
        name=spec.name,
        description=description,
        url=url,
        version=str(int(spec.updated_at.timestamp())),
        protocol_version=PROTOCOL_VERSION,
        preferred_transport="JSONRPC",
        provider=AgentProvider(
            organization="Toolcrib", url=settings.TOOLCRIB_PUBLIC_URL
        ),
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=TEXT,
        default_output_modes=TEXT,
        skills=skills(spec=spec, description=description),
        security_schemes=schemes,
        # Any one of the schemes opens the endpoint.
        security=[{name: []} for name in schemes],
    )


def security_schemes() -> dict[str, SecurityScheme]:
    """A Toolcrib API token always; the sign-in provider's tokens when there is one."""
    schemes = {
        API_TOKEN: SecurityScheme(
            root=HTTPAuthSecurityScheme(
                scheme="bearer",
                description="A Toolcrib API token (POST /api/auth/token/), as "
                "Authorization: Bearer <token>. The task runs as its user.",
            )
        )
    }
    issuer = settings.TOOLCRIB_OIDC_ISSUER
    if issuer:
        schemes[OIDC] = SecurityScheme(
            root=OpenIdConnectSecurityScheme(
                open_id_connect_url=f"{issuer}/.well-known/openid-configuration",
                description="An access token of the sign-in provider, for the "
                "audience TOOLCRIB_GATEWAY_URL, as Authorization: Bearer <token>.",
            )
        )
    return schemes


def skills(*, spec: AgentSpec, description: str) -> list[AgentSkill]:
    """The agent itself, then one skill per tool and toolset its tree declares."""
    main = AgentSkill(
        id=spec.name,
        name=spec.name,
        description=description,
        tags=["toolcrib", spec.kind],
        examples=[str(text) for text in spec.starters] or None,
    )
    try:
        root = agent_for(spec)
    except AgentBuildError:
        return [main]
    return [main, *_tool_skills(root, seen={spec.name})]


def _tool_skills(root: BaseNode, *, seen: set[str]) -> list[AgentSkill]:
    """One skill per tool and toolset of every node of the tree: sub-agents, and
    the nodes of its workflows (a Workflow root has no `sub_agents`)."""
    found = []
    for node in walk(root):
        for tool in node_tools(node):
            skill = _skill(tool, owner=node.name, seen=seen)
            if skill is not None:
                found.append(skill)
    return found


def _skill(tool: Any, *, owner: str, seen: set[str]) -> AgentSkill | None:
    if isinstance(tool, BaseToolset):
        name, kind, text = type(tool).__name__, "toolset", ""
    else:
        name = getattr(tool, "name", None) or getattr(tool, "__name__", "")
        kind = "tool"
        text = getattr(tool, "description", None) or getattr(tool, "__doc__", "")
    if not name or name in seen:
        return None
    seen.add(name)
    first = (text or "").strip().split("\n\n")[0].strip()
    return AgentSkill(
        id=name,
        name=name,
        description=first or f"The {kind} {name} of {owner}.",
        tags=[kind],
    )
