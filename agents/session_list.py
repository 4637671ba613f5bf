"""Finding one's sessions: the list, a page at a time, by agent, archived or not,
searched by words (agents.search), each with its status; archiving.

An archived session is only left out of the default list (`archived=True` lists
those): it keeps its events, and its owner (or staff) may open it, use it and
bring it back.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, QuerySet, Subquery
from django.utils import timezone

from agents.models import Request, Run, Session
from agents.search import ranked_session_ids, search_terms
from agents.sessions import visible_sessions

PAGE_SIZE = 20


class Status:
    """How a session is, as its list shows it."""

    CLOSED = "closed"  # takes no new turns
    WAITING = "waiting"  # for a person: a pending request, or a waiting last run
    RUNNING = "running"  # a turn queued or running
    IDLE = "idle"  # ready for a message

    ALL = (CLOSED, WAITING, RUNNING, IDLE)


@dataclass(frozen=True)
class SessionPage:
    sessions: list[Session]
    has_next: bool


def list_sessions(
    *, user, search: str = "", agent: str = "", archived: bool = False, page: int = 1
) -> SessionPage:
    """A page of the user's own sessions: the latest activity first, or with words
    to search, the best match first. Two queries at most, whatever the page holds."""
    rows = visible_sessions(user=user).filter(archived_at__isnull=not archived)
    if agent:
        rows = rows.filter(agent__name=agent)
    offset = (page - 1) * PAGE_SIZE
    if not search.strip():
        found = list(
            with_status(rows).order_by("-updated_at", "-pk")[
                offset : offset + PAGE_SIZE + 1
            ]
        )
        return SessionPage(found[:PAGE_SIZE], len(found) > PAGE_SIZE)
    ids = ranked_session_ids(
        sessions=rows,
        terms=search_terms(search),
        limit=PAGE_SIZE + 1,
        offset=offset,
    )
    return SessionPage(_in_order(rows, ids[:PAGE_SIZE]), len(ids) > PAGE_SIZE)


def _in_order(rows: QuerySet[Session], ids: Sequence[str]) -> list[Session]:
    if not ids:
        return []
    by_id = with_status(rows).in_bulk(ids)
    return [by_id[pk] for pk in ids if pk in by_id]


def with_status(sessions: QuerySet[Session]) -> QuerySet[Session]:
    """The sessions with what session_status() and the last run read, annotated in
    the same query."""
    runs = Run.objects.filter(session=OuterRef("pk"))
    last = runs.order_by("-created_at")
    pending = Request.objects.filter(
        session=OuterRef("pk"), status=Request.Status.PENDING
    )
    return sessions.annotate(
        has_pending_request=Exists(pending),
        has_unfinished_run=Exists(
            runs.filter(status__in=[Run.Status.QUEUED, Run.Status.RUNNING])
        ),
        last_run_id=Subquery(last.values("id")[:1]),
        last_run_status=Subquery(last.values("status")[:1]),
        last_run_waiting_for=Subquery(last.values("waiting_for")[:1]),
    )


def session_status(session: Session) -> str:
    """Closed, waiting for a person, running, or idle (see Status)."""
    if not hasattr(session, "has_pending_request"):
        session = with_status(Session.objects.filter(pk=session.pk)).get()
    if session.closed_at:
        return Status.CLOSED
    if session.has_pending_request or session.last_run_status == Run.Status.WAITING:
        return Status.WAITING
    if session.has_unfinished_run:
        return Status.RUNNING
    return Status.IDLE


def archive_session(*, session: Session) -> Session:
    """Leave the session out of the default list; archiving twice keeps the first
    time. Its activity (the list's order) stays."""
    if session.archived_at is None:
        session.archived_at = timezone.now()
        Session.objects.filter(pk=session.pk).update(archived_at=session.archived_at)
    return session


def unarchive_session(*, session: Session) -> Session:
    """List the session again."""
    session.archived_at = None
    Session.objects.filter(pk=session.pk).update(archived_at=None)
    return session
