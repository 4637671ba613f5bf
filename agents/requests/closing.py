"""A request's end stored: answered, decided or expired, signalled
(signals.request_decided) and rung (rings.py) once it commits.

The answer path (agents.answers.answer) ends a request this way after it resumed
the agent; closing a session (agents.memory) and stopping a run (agents.turns.cancel)
expire their pending requests here, resuming nothing: nobody is left to tell.
"""

from django.utils import timezone

from agents.models import Request, Run, Session
from agents.requests import rings, signals
from agents.requests.kinds import Reply, kind_of


def store_end(locked: Request, reply: Reply, *, user, run: Run | None) -> None:
    """Store how a locked request ended (`reply`: answered, decided or expired), by
    whom and the Run that resumes it, if any; signal it, and ring the inboxes once
    it commits."""
    locked.status = reply.status
    locked.response = reply.stored
    locked.comment = reply.comment
    locked.answered_by = user
    locked.answered_at = timezone.now()
    locked.answer_run = run
    locked.save(
        update_fields=[
            "status",
            "response",
            "comment",
            "answered_by",
            "answered_at",
            "answer_run",
            "approved_args",
            "args_edited_by",
        ]
    )
    signals.send_decided(locked)
    expired = reply.status == Request.Status.EXPIRED
    rings.ring_on_commit(locked, rings.EXPIRED if expired else rings.ANSWERED)


def expire_closed(*, session: Session) -> int:
    """Expire a closing session's pending requests: nobody is left to tell its agent.

    Call it in the transaction that closes the session; each is audited and rung
    (an inbox drops its card) once that commits. Returns how many expired.
    """
    pending = Request.objects.select_for_update().filter(
        session=session, status=Request.Status.PENDING
    )
    expired = 0
    for locked in pending:
        store_end(locked, kind_of(locked).expired(locked), user=None, run=None)
        expired += 1
    return expired


def expire_stopped(*, run: Run) -> int:
    """Expire a stopped run's pending requests: its turn will not resume.

    Call it in the transaction that stops the run (agents.turns.cancel), as
    expire_closed is called; returns how many expired.
    """
    pending = Request.objects.select_for_update().filter(
        run=run, status=Request.Status.PENDING
    )
    expired = 0
    for locked in pending:
        store_end(locked, kind_of(locked).expired(locked), user=None, run=None)
        expired += 1
    return expired
