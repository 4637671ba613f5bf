"""Sessions, events, runs and audit rows of a given age, as a team's database holds
them after months of use."""

import itertools
import time
from datetime import timedelta

from django.utils import timezone

from agents.artifacts import upload_artifact
from agents.models import Event, Request, Run, RunSpan, Session
from agents.sessions import create_session
from toolsets.models import ToolCall

_calls = itertools.count(1)


def session_of(user, agent, *, days_idle: float, events: int = 3) -> Session:
    """A session of `agent` whose last activity was `days_idle` days ago, with
    `events` events and one ended run with a span."""
    session = create_session(user=user, agent=agent)
    add_events(session, events)
    run = Run.objects.create(
        session=session, user=user, status=Run.Status.SUCCEEDED, text="hello"
    )
    RunSpan.objects.create(
        run=run, span_id="a1", name="toolcrib.turn", start=timezone.now(), duration_ms=1
    )
    return idle(session, days=days_idle)


def add_events(session: Session, count: int) -> None:
    first = session.last_seq + 1
    Event.objects.bulk_create(
        Event(
            session=session,
            seq=seq,
            event_id=f"e{seq}",
            author="user",
            kind="user_message",
            timestamp=time.time(),
            data={"content": {"role": "user", "parts": [{"text": f"message {seq}"}]}},
        )
        for seq in range(first, first + count)
    )
    Session.objects.filter(pk=session.pk).update(last_seq=first + count - 1)
    session.refresh_from_db()


def idle(session: Session, *, days: float) -> Session:
    """The session as if nothing happened in it for `days` days."""
    Session.objects.filter(pk=session.pk).update(
        updated_at=timezone.now() - timedelta(days=days)
    )
    session.refresh_from_db()
    return session


def with_artifact(session: Session, filename: str = "notes.txt") -> Session:
    upload_artifact(
        session=session, filename=filename, content=b"kept?", mime_type="text/plain"
    )
    return session


def pending_request(session: Session) -> Request:
    return Request.objects.create(
        kind=Request.Kind.APPROVAL,
        session=session,
        call_id=f"call-{next(_calls)}",
        tool_name="bank.wire_money",
    )


def tool_call(user, *, days_ago: float, agent: str = "", status: str = "ok"):
    at = timezone.now() - timedelta(days=days_ago)
    return ToolCall.objects.create(
        user=user,
        agent=agent,
        tool_name="launch",
        tool_full_name="rockets.launch",
        status=status,
        started_at=at,
        finished_at=at,
    )


def exists(row) -> bool:
    return type(row).objects.filter(pk=row.pk).exists()
