"""The runtime's door for the apps above it (toolsets, evals, demo): agents built
and their code synced, sessions reached, an eval case's turns started and stopped,
ADK's session state read, secrets kept out of what leaves, and the retention job's
batches a job of theirs fills.

One of the six modules of agents that toolsets and demo may import (the contract
"toolsets and demo enter agents by its public door", pyproject.toml): the others
are agents.models, agents.timeline, agents.pauses, agents.accounts and
agents.client_input. Everything else of agents is private to it; add a name here,
by concept, rather than import a private module from above.
"""

from agents.adk.builder import (
    AgentBuildError,
    BrokenToolset,
    agent_for,
    broken_code_agents,
    load_code_agent,
    resolve_toolset,
    settings_toolset_target,
    sync_code_agents,
)
from agents.adk.credentials import DjangoCredentialService
from agents.adk.nodes import node_tools, path_names
from agents.adk.nodes import walk as walk_nodes
from agents.adk.session_rows import session_rows
from agents.adk.session_state import session_state
from agents.redaction import mask_turn_secrets, redact_secrets
from agents.retention.jobs import Batch, Count, Scope
from agents.sessions import (
    AgentNotAvailable,
    access_session,
    build_agent_tree,
    create_eval_session,
    get_usable_agent,
)
from agents.turns.cancel import (
    NothingRunning,
    RunEnded,
    cancel_session_run,
    end_eval_session,
)
from agents.turns.start import start_turn, wait_for_run

__all__ = [
    # An agent's tree built, its toolsets resolved, code agents synced.
    "AgentBuildError",
    "BrokenToolset",
    "agent_for",
    "broken_code_agents",
    "load_code_agent",
    "resolve_toolset",
    "settings_toolset_target",
    "sync_code_agents",
    # A tree's nodes, workflows' among them (ADK 2.x), and the tools they declare.
    "node_tools",
    "path_names",
    "walk_nodes",
    # Sessions: who may use one, and which agents a user may use.
    "AgentNotAvailable",
    "access_session",
    "build_agent_tree",
    "get_usable_agent",
    # Turns: an eval case's hidden session, its turns started, waited on, stopped.
    "NothingRunning",
    "RunEnded",
    "cancel_session_run",
    "create_eval_session",
    "end_eval_session",
    "start_turn",
    "wait_for_run",
    # ADK's services on Django, as a tool's governance reads them.
    "DjangoCredentialService",
    "session_rows",
    "session_state",
    # The one redaction rule.
    "mask_turn_secrets",
    "redact_secrets",
    # The retention job's batches (TOOLCRIB_RETENTION_JOBS).
    "Batch",
    "Count",
    "Scope",
]
