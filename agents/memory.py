"""Memory as users see it: add a session to memory, close a session, search.

A session joins its user's memory when the user asks (`POST
/api/sessions/{id}/memory/`) and when the user closes it (`POST
/api/sessions/{id}/close/`): a closed session takes no new turns or files. Search
only ever reads the signed-in user's own memory of one agent.
"""

from asgiref.sync import async_to_sync
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from google.adk.memory.memory_entry import MemoryEntry as AdkMemoryEntry
from google.adk.sessions import Session as AdkSession

from agents.adk.memory import add_session, search
from agents.adk.sessions import DjangoSessionService
from agents.events.log import record_and_publish
from agents.models import AgentSpec, Run, Session
from agents.requests import closing
from agents.requests.inbox import has_pending_calls
from agents.sessions import adk_user_id
from project.errors import DomainError, NotFoundError


class SessionBusy(DomainError):
    code = "session_busy"


def remember_session(*, session: Session) -> int:
    """Add the session to its user's memory (again); returns the entries it holds."""
    return add_session(session=_adk_session(session))


def close_session(*, session: Session) -> Session:
    """Add the session to memory and close it; closing twice changes nothing.

    Its pending approvals and credential requests expire with it (nobody could
    answer them any more), and the inboxes that showed them are told; once it is
    stored, `session_closed` tells every open page of it at once.

    Raises:
        SessionBusy: A turn is queued or running, or a long-running call waits.
    """
    if session.closed_at:
        return session
    _ensure_idle(session)
    with transaction.atomic():
        remember_session(session=session)
        session.closed_at = timezone.now()
        session.save(update_fields=["closed_at", "updated_at"])
        closing.expire_closed(session=session)
    record_and_publish(session=session, kind="session_closed", data={})
    return session


def search_memory(*, user, agent_name: str, query: str) -> list[AdkMemoryEntry]:
    """The user's own memory of one agent that best matches the query."""
    if not AgentSpec.objects.filter(name=agent_name).exists():
        raise NotFoundError(_("No such agent."))
    return search(app_name=agent_name, user_id=adk_user_id(user), query=query)


def _ensure_idle(session: Session) -> None:
    if Run.objects.filter(
        session=session, status__in=[Run.Status.QUEUED, Run.Status.RUNNING]
    ).exists():
        raise SessionBusy(_("A turn of this session is still running."))
    if has_pending_calls(session=session):
        raise SessionBusy(
            _(
                "A long-running call of this session waits for its result; "
                "answer it before closing."
            )
        )


def _adk_session(session: Session) -> AdkSession:
    found = async_to_sync(DjangoSessionService().get_session)(
        app_name=session.app_name, user_id=session.user_id, session_id=session.adk_id
    )
    if found is None:
        raise NotFoundError(_("No such session."))
    return found
