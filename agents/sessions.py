"""Sessions as users see them: create, and fetch with an access check in one call."""

from django.db.models import QuerySet

from agents.models import AgentSpec, Run, Session, new_session_id
from project.errors import NotFoundError


class AgentNotAvailable(NotFoundError):
    """The agent does not exist, is inactive, or its code no longer loads."""


def usable_agents(*, user) -> QuerySet[AgentSpec]:
    """The agents a user may start sessions with."""
    return AgentSpec.objects.filter(is_active=True, missing=False)


def get_usable_agent(*, user, name: str) -> AgentSpec:
    agent = usable_agents(user=user).filter(name=name).first()
    if agent is None:
        raise AgentNotAvailable(name)
    return agent


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
        raise NotFoundError("No such session.")
    return session


def access_run(*, user, run_id) -> Run:
    """The run if `user` owns its session (or is staff), else NotFoundError."""
    queryset = Run.objects.select_related("session")
    if not user.is_staff:
        queryset = queryset.filter(session__owner=user)
    run = queryset.filter(pk=run_id).first()
    if run is None:
        raise NotFoundError("No such run.")
    return run
