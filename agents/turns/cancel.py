"""Stopping a turn a person no longer wants: a queued or running Run ends cancelled.

One path for REST (`POST /api/runs/{id}/cancel/`) and the session socket's `cancel`
frame. In one transaction the Run ends `cancelled` (a conditional UPDATE, so a turn
that ended first keeps its ending, and the refusal says so), usage counts it
(agents.usage; the tokens its turn stores after are added then) and its pending
requests expire; then the turn is told to stop wherever it runs (stops.py), and
`run_finished` (status cancelled) is recorded and published, so every open page
sees it. The session's queue goes on at once: the cancelled Run has ended.

The turn's process cancels the turn's task: the model call and any async tool in
flight stop there, and the audit notes the calls it cut short. A sync tool runs on
a thread Python cannot stop: its result is abandoned.
"""

import logging
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from agents.events.log import record_and_publish
from agents.events.wire import run_out
from agents.models import Run, Session
from agents.requests.closing import expire_closed, expire_stopped
from agents.sessions import access_run
from agents.turns import stops
from agents.turns.start import UNFINISHED
from agents.usage import count_ended_runs
from project.errors import DomainError, NotFoundError

logger = logging.getLogger(__name__)


class RunEnded(DomainError):
    """The run has already ended: there is nothing left to stop."""

    status_code = 409
    code = "run_ended"

    def __init__(self, status: str) -> None:
        super().__init__(f"This turn has already ended ({status}): nothing to stop.")


class NothingRunning(DomainError):
    """The session has no turn queued or running."""

    status_code = 409
    code = "nothing_running"

    def __init__(self) -> None:
        super().__init__("No turn of this session is queued or running.")


def cancel_run(*, user, run_id: UUID | str) -> Run:
    """Stop a queued or running run of a session `user` owns (or any, for staff).

    Raises:
        NotFoundError: No such run, or not the user's.
        RunEnded: It has already ended (409).
    """
    return _cancel(access_run(user=user, run_id=run_id))


def cancel_session_run(*, user, session: Session, run_id: UUID | None = None) -> Run:
    """Stop a run of `session` (whose access the caller checked): `run_id`, or with
    none the session's current one (its running run, else its oldest queued).

    Raises:
        NotFoundError: The session has no run `run_id`.
        RunEnded: That run has already ended (409).
        NothingRunning: No id, and no run of the session is queued or running.
    """
    runs = Run.objects.select_related("session").filter(session=session)
    if run_id is not None:
        run = runs.filter(pk=run_id).first()
        if run is None:
            raise NotFoundError("No such run.")
        return _cancel(run)
    # The queue's order (queue.py): the oldest unfinished run heads it.
    run = runs.filter(status__in=UNFINISHED).order_by("created_at", "id").first()
    if run is None:
        raise NothingRunning()
    return _cancel(run)


def end_eval_session(*, session: Session) -> int:
    """Close an eval case's hidden session (evals) once its case has run: no new
    turns, and its pending requests (a call held for approval, which an eval never
    approves) expired. Never added to memory. Returns how many expired."""
    with transaction.atomic():
        Session.objects.filter(pk=session.pk, closed_at__isnull=True).update(
            closed_at=timezone.now()
        )
        return expire_closed(session=session)


def _cancel(run: Run) -> Run:
    """End the run cancelled, expire its requests, stop its turn, tell every page."""
    now = timezone.now()
    with transaction.atomic():
        ended = Run.objects.filter(pk=run.pk, status__in=UNFINISHED).update(
            status=Run.Status.CANCELLED, finished_at=now, waiting_for=""
        )
        if not ended:
            run.refresh_from_db(fields=["status"])
            raise RunEnded(run.status)
        count_ended_runs(Run.objects.filter(pk=run.pk))
        expire_stopped(run=run)
    # Its invocation id, if the turn began since the run was read.
    run.refresh_from_db(
        fields=["status", "finished_at", "waiting_for", "invocation_id"]
    )
    stops.request_stop(run_id=run.pk)
    logger.info("turn cancelled run=%s", run.pk)
    record_and_publish(
        session=run.session,
        kind="run_finished",
        invocation_id=run.invocation_id,
        data={"run": run_out(run)},
    )
    return run
