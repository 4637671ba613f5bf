"""Agents, sessions, events, state and runs: what Toolcrib records about agents.

One module per concept, each imported here, where Django finds its models (the
app label stays `agents`) and every caller imports them (`from agents.models
import Run`):

- agent_specs.py: AgentSpec, the agents users can talk to, and AgentVersion;
- sessions.py: Session, its Events, and state by scope (AppState, UserState);
- runs.py: Run (one turn), its RunSpans, RunTotal (usage by the hour), Budget;
- stores.py: what ADK's artifact and memory services keep (Artifact, MemoryEntry);
- requests.py: Request (a pause for a person), RequestApproval, StandingApproval;
- credentials.py: Credential, a user's sealed credential for one app;
- notices.py: NoticePreference, WebhookDestination, Delivery, NoticeLink;
- leases.py: Lease, a job one process at a time may run;
- changes.py: Change, who changed which object staff govern (the change audit);
- a2a_tasks.py: A2ATask, a task of a caller over A2A (agents.a2a);
- connections.py: ModelConnection, ServedModel (prices), ConnectionsVersion;
- model_grants.py: ModelGrant (who may use which model), ModelGrantsVersion;
- prompts.py: Prompt, a person's reusable text, shared to groups;
- shares.py: Share (a session's read-only link), ShareView, ShareSettings.
- preferences.py: UserPreference, a person's theme and language.

The imports keep the order the models were always registered in (and Django
lists them in).
"""

# isort: off
from agents.models.agent_specs import (
    DRAFT_SUFFIX,
    HISTORY_DEFAULT,
    RETENTION_MAX_DAYS,
    AgentSpec,
    AgentVersion,
)
from agents.models.sessions import AppState, Event, Session, UserState, new_session_id
from agents.models.runs import Budget, Run, RunSpan, RunTotal
from agents.models.stores import Artifact, MemoryEntry
from agents.models.requests import Request, RequestApproval, StandingApproval
from agents.models.credentials import Credential
from agents.models.notices import (
    Delivery,
    NoticeLink,
    NoticePreference,
    WebhookDestination,
)
from agents.models.leases import Lease
from agents.models.changes import Change
from agents.models.a2a_tasks import A2ATask
from agents.models.connections import (
    ConnectionsVersion,
    ModelConnection,
    ServedModel,
)
from agents.models.model_grants import ModelGrant, ModelGrantsVersion
from agents.models.prompts import Prompt
from agents.models.shares import Share, ShareSettings, ShareView
from agents.models.preferences import UserPreference
# isort: on

__all__ = [
    "A2ATask",
    "DRAFT_SUFFIX",
    "HISTORY_DEFAULT",
    "RETENTION_MAX_DAYS",
    "AgentSpec",
    "AgentVersion",
    "AppState",
    "Artifact",
    "Budget",
    "Change",
    "ConnectionsVersion",
    "Credential",
    "Delivery",
    "Event",
    "Lease",
    "MemoryEntry",
    "ModelConnection",
    "ModelGrant",
    "ModelGrantsVersion",
    "NoticeLink",
    "NoticePreference",
    "Prompt",
    "Request",
    "RequestApproval",
    "Run",
    "RunSpan",
    "RunTotal",
    "ServedModel",
    "Session",
    "Share",
    "ShareSettings",
    "ShareView",
    "StandingApproval",
    "UserPreference",
    "UserState",
    "WebhookDestination",
    "new_session_id",
]
