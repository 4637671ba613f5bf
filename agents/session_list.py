"""Finding one's sessions: the list, a page at a time, by agent, archived or not,
searched by words (agents.search), each with its status; archiving.

An archived session is only left out of the default list (`archived=True` lists
those): it keeps its events, and its owner (or staff) may open it, use it and
bring it back.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from agents.cursors import Cursor, encode_cursor
from agents.models import Request, Run, Session
from agents.search import SearchHit, search_sessions, search_terms
from agents.sessions import visible_sessions

PAGE_SIZE = 20
UNFINISHED = (Run.Status.QUEUED, Run.Status.RUNNING)


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
    # The next page's position: set when the list pages by key (no search).
    next_cursor: str | None = None


def list_sessions(
    *,
    user,
    search: str = "",
    agent: str = "",
    archived: bool = False,
    page: int = 1,
    cursor: Cursor | None = None,
) -> SessionPage:
    """A page of the user's own sessions: the latest activity first, by key (after
    `cursor`, or a `page` number for older clients), or with words to search, the
    best match first, each found session with a snippet of its matching text. The
    same queries on every page, whatever it holds: the page (two with a search: the
    ranking and the snippets) and its sessions' status (two)."""
    rows = visible_sessions(user=user).filter(archived_at__isnull=not archived)
    if agent:
        rows = rows.filter(agent__name=agent)
    if search.strip():
        return _searched(rows, owner_id=user.pk, search=search, page=page)
    ordered = rows.order_by("-updated_at", "-pk")
    if cursor is not None:
        ordered = ordered.filter(
            Q(updated_at__lt=cursor.at) | Q(updated_at=cursor.at, pk__lt=cursor.id),
            updated_at__lte=cursor.at,  # a range for the index, beside the OR
        )
        found = list(ordered[: PAGE_SIZE + 1])
    else:
        offset = (page - 1) * PAGE_SIZE
        found = list(ordered[offset : offset + PAGE_SIZE + 1])
    shown = add_status(found[:PAGE_SIZE])
    if len(found) <= PAGE_SIZE:
        return SessionPage(shown, has_next=False)
    last = shown[-1]
    return SessionPage(
        shown, has_next=True, next_cursor=encode_cursor(at=last.updated_at, id=last.pk)
    )


def _searched(
    rows: QuerySet[Session], *, owner_id: int, search: str, page: int
) -> SessionPage:
    offset = (page - 1) * PAGE_SIZE
    hits = search_sessions(
        sessions=rows,
        owner_id=owner_id,
        terms=search_terms(search),
        limit=PAGE_SIZE + 1,
        offset=offset,
    )
    shown = add_status(_in_order(rows, hits[:PAGE_SIZE]))
    return SessionPage(shown, has_next=len(hits) > PAGE_SIZE)


def _in_order(rows: QuerySet[Session], hits: Sequence[SearchHit]) -> list[Session]:
    if not hits:
        return []
    by_id = rows.in_bulk([hit.session_id for hit in hits])
    found = []
    for hit in hits:
        session = by_id.get(hit.session_id)
        if session is not None:
            session.snippet = hit.snippet
            found.append(session)
    return found


def add_status(sessions: Sequence[Session]) -> list[Session]:
    """The sessions, each with what session_status() and the last run read, found
    for all of them at once: one grouped query of their runs and one of their
    pending requests, never a subquery per session."""
    sessions = list(sessions)
    ids = [session.pk for session in sessions]
    last_runs = {}
    unfinished = set()
    pending = set()
    if ids:
        for run in _last_runs(ids):
            last_runs[run["session_id"]] = run
            if run["unfinished"]:
                unfinished.add(run["session_id"])
        pending = set(
            Request.objects.filter(session_id__in=ids, status=Request.Status.PENDING)
            .values_list("session_id", flat=True)
            .distinct()
        )
    for session in sessions:
        last = last_runs.get(session.pk, {})
        session.has_pending_request = session.pk in pending
        session.has_unfinished_run = session.pk in unfinished
        session.last_run_id = last.get("id")
        session.last_run_status = last.get("status")
        session.last_run_waiting_for = last.get("waiting_for")
    return sessions


def _last_runs(ids: Sequence[str]) -> list[dict]:
    # Each session's latest run (one step down the (session, created_at) index a
    # session), and whether any of its runs is unfinished (the (session, status)
    # index): a session's thousands of runs are never read.
    latest = (
        Run.objects.filter(session_id=OuterRef("pk"))
        .order_by("-created_at", "-id")
        .values("id")[:1]
    )
    last_ids = Session.objects.filter(pk__in=ids).values(last=Subquery(latest))
    still = Run.objects.filter(session_id=OuterRef("session_id"), status__in=UNFINISHED)
    return list(
        Run.objects.filter(pk__in=last_ids)
        .annotate(unfinished=Exists(still))
        .values("session_id", "id", "status", "waiting_for", "unfinished")
    )


def session_status(session: Session) -> str:
    """Closed, waiting for a person, running, or idle (see Status)."""
    if not hasattr(session, "has_pending_request"):
        add_status([session])
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
