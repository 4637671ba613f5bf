"""An ADK session's stored row, found the way ADK scopes a session id: within its
(app, user), never by the id alone. Whatever goes from an ADK session back to its
row goes through here.
"""

from django.db.models import QuerySet
from google.adk.sessions import Session as AdkSession

from agents.models import Session
from project.patches.prepared import Param, Prepared


def session_rows(session: AdkSession) -> QuerySet[Session]:
    """The stored row of an ADK session (one at most), found by ADK's own scoping:
    its id within its (app, user), never the id alone."""
    return session_rows_by_id(
        app_name=session.app_name, user_id=session.user_id, session_id=session.id
    )


def session_rows_by_id(
    *, app_name: str, user_id: str, session_id: str
) -> QuerySet[Session]:
    """The stored row of a session (one at most) by ADK's keys."""
    # Scoped by app and user: another user's session id is as good as unknown.
    session_id = session_id.strip() if session_id else session_id
    return Session.objects.filter(adk_id=session_id, app_name=app_name, user_id=user_id)


def _session_row() -> Prepared:
    """A session's row by ADK's keys (as session_rows_by_id() finds it), compiled once."""
    field = Session._meta.get_field
    return Prepared(
        Session.objects.filter(
            adk_id=Param("adk_id", field("adk_id")),
            app_name=Param("app_name", field("app_name")),
            user_id=Param("user_id", field("user_id")),
        ).order_by("pk")[:1]
    )


SESSION_ROW = _session_row()
