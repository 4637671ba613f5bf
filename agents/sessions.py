"""Sessions as users see them: create, and fetch with an access check in one call."""

from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _
from google.adk.agents import BaseAgent

from agents.adk.builder import (
    AgentBuildError,
    agent_for,
    code_agent_error,
    unloaded_code_agents,
)
from agents.models import AgentSpec, Run, Session, new_session_id
from project.errors import DomainError, NotFoundError

NO_SUCH_AGENT = "No such agent, or you may not use it."


class AgentNotAvailable(NotFoundError):
    """The agent does not exist, is inactive, or its code no longer loads."""

    def __init__(self, message: str = NO_SUCH_AGENT) -> None:
        super().__init__(message)


class AgentNotLoaded(DomainError):
    """The agent's code does not load now: staff read why, others that it cannot run."""

    status_code = 409
    code = "agent_not_loaded"


def agents_open_to(*, user) -> QuerySet[AgentSpec]:
    """The agents `user` may use, active or not, drafts left out: those of no group
    (open to everyone signed in) and those of a group the user is in; staff, all."""
    agents = AgentSpec.objects.filter(draft_of__isnull=True)
    if user.is_staff:
        return agents
    grouped = AgentSpec.groups.through.objects.values("agentspec_id")
    mine = AgentSpec.groups.through.objects.filter(group__user=user).values(
        "agentspec_id"
    )
    return agents.filter(~Q(pk__in=grouped) | Q(pk__in=mine))


def usable_agents(*, user) -> QuerySet[AgentSpec]:
    """The agents a user may start sessions with: open to them, active, loading."""
    return agents_open_to(user=user).filter(is_active=True, missing=False)


def get_draft(*, user, name: str) -> AgentSpec:
    """The draft of agent `name`, to try in a session: staff only.

    Raises:
        AgentNotAvailable: Not staff, or the agent has no draft.
    """
    draft = AgentSpec.objects.filter(draft_of__name=name).first()
    if not user.is_staff or draft is None:
        raise AgentNotAvailable(_("No draft of this agent to try."))
    return draft


def listed_agents(*, user) -> QuerySet[AgentSpec]:
    """The agents a user sees listed: the usable ones, and for staff also the code
    agents of settings that do not load (agents.adk.builder.code_agent_error)."""
    if not user.is_staff:
        return usable_agents(user=user)
    return usable_agents(user=user) | unloaded_code_agents()


def get_usable_agent(*, user, name: str) -> AgentSpec:
    """The agent if `user` may start a session with it (staff: a draft too, by its
    own name).

    Raises:
        AgentNotLoaded: Staff asked for a code agent that fails to load (says why).
        AgentNotAvailable: Any other agent the user may not use.
    """
    agent = usable_agents(user=user).filter(name=name).first()
    if agent is None and user.is_staff:  # a draft's session, its tools
        agent = AgentSpec.objects.filter(name=name, draft_of__isnull=False).first()
    if agent is not None:
        return agent
    listed = listed_agents(user=user).filter(name=name).first()
    error = code_agent_error(listed) if listed is not None else None
    if error:
        raise AgentNotLoaded(
            _("The agent %(name)s does not load: %(error)s")
            % {"name": name, "error": error}
        )
    raise AgentNotAvailable()


def build_agent_tree(*, user, spec: AgentSpec) -> BaseAgent:
    """The ADK agent tree of a usable agent.

    Raises:
        AgentNotLoaded: Its code, or a sub-agent's, fails to load now; only staff
            read the error, which names code.
    """
    try:
        return agent_for(spec)
    except AgentBuildError as exc:
        if user.is_staff:
            raise AgentNotLoaded(
                _("The agent %(spec_name)s does not load: %(exc)s")
                % {"spec_name": spec.name, "exc": exc}
            ) from exc
        raise AgentNotLoaded(exc.public_message) from exc


def create_session(*, user, agent: AgentSpec) -> Session:
    """A new session of `agent` for `user`; the ADK user id is always the user's own.

    Its ADK id is its own id: a fresh uuid, so no other session of the user has it.
    """
    session_id = new_session_id()
    return Session.objects.create(
        id=session_id,
        adk_id=session_id,
        app_name=agent.name,
        user_id=adk_user_id(user),
        owner=user,
        agent=agent,
    )


def create_eval_session(*, user, agent: AgentSpec, state: dict) -> Session:
    """A hidden session of `agent` run as `user`, for one eval case (evals).

    It has no owner, so it is in no one's sessions list, search or inbox, and
    memory never reads it; its ADK user id is the user's, so governance decides
    its calls as for her. Its state starts as the case's.
    """
    session_id = new_session_id()
    return Session.objects.create(
        id=session_id,
        adk_id=session_id,
        app_name=agent.name,
        user_id=adk_user_id(user),
        owner=None,
        agent=agent,
        state=dict(state),
    )


def adk_user_id(user) -> str:
    return str(user.pk)


def visible_sessions(*, user) -> QuerySet[Session]:
    """A user's own sessions (staff see their own here too; they reach others by id)."""
    return Session.objects.filter(owner=user).select_related("agent", "owner")


def access_session(*, user, session_id: str) -> Session:
    """The session if `user` owns it (or is staff), else NotFoundError."""
    queryset = Session.objects.select_related("agent", "owner")
    if not user.is_staff:
        queryset = queryset.filter(owner=user)
    session = queryset.filter(pk=session_id).first()
    if session is None:
        raise NotFoundError(_("No such session."))
    return session


def access_run(*, user, run_id) -> Run:
    """The run if `user` owns its session (or is staff), else NotFoundError."""
    queryset = Run.objects.select_related("session")
    if not user.is_staff:
        queryset = queryset.filter(session__owner=user)
    run = queryset.filter(pk=run_id).first()
    if run is None:
        raise NotFoundError(_("No such run."))
    return run
