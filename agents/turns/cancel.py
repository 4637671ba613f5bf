"""Stopping a turn a person no longer wants: a queued or running Run ends cancelled.

One path for REST (`POST /api/runs/{id}/cancel/`) and the session socket's `cancel`
frame; a session's whole queue (`POST /api/sessions/{id}/queue/cancel/`, the socket's
`cancel_queue` frame) the same way, all its runs in one UPDATE. In one transaction the Run ends `cancelled` (a conditional UPDATE, so a turn
that ended first keeps its ending, and the refusal says so), usage counts it
(agents.usage; the tokens its turn stores after are added then) and its pending
requests expire; then the turn is told to stop wherever it runs (stops.py), and
`run_finished` (status cancelled) is recorded and published, so every open page
sees it. The session's queue goes on at once: the cancelled Run has ended.

A queued run cancelled never runs: the cancel and the claim (agents.turns.queue) are
both conditional UPDATEs of the Run's row, so one of them finds the row changed. A
run the claim took first is running, and is stopped as a running one.

The turn's process cancels the turn's task: the model call and any async tool in
flight stop there, and the audit notes the calls it cut short. A sync tool runs on
a thread Python cannot stop: its result is abandoned.
"""

import logging
from uuid import UUID

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

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
        super().__init__(
            _("This turn has already ended (%(status)s): nothing to stop.")
            % {"status": status}
        )


class NothingRunning(DomainError):
    """The session has no turn queued or running."""

    status_code = 409
    code = "nothing_running"

    def __init__(self) -> None:
        super().__init__(_("No turn of this session is queued or running."))


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
            raise NotFoundError(_("No such run."))
        return _cancel(run)
    # The queue's order (queue.py): the oldest unfinished run heads it.
    run = runs.filter(status__in=UNFINISHED).order_by("created_at", "id").first()
    if run is None:
        raise NothingRunning()
    return _cancel(run)


def session_queue(*, session: Session) -> list[Run]:
    """The session's queued and running runs, in the queue's order (queue.py): the
    head first, running once a turn has claimed it."""
    runs = Run.objects.select_related("session").filter(
        session=session, status__in=UNFINISHED
    )
    return list(runs.order_by("created_at", "id"))


def cancel_queue(*, session: Session, running: bool = False) -> list[Run]:
    """Cancel every queued run of `session` (whose access the caller checked), and
    with `running` its running one too; the runs cancelled, in the queue's order
    (none: nothing was left to cancel).

    One transaction: the runs are locked, then ended by one conditional UPDATE, so a
    queued run this cancels is never claimed after, and one the claim took first
    (running now) is left to Stop unless `running`.
    """
    statuses = UNFINISHED if running else (Run.Status.QUEUED,)
    now = timezone.now()
    with transaction.atomic():
        locked = (
            Run.objects.select_for_update()
            .filter(session=session, status__in=statuses)
            .order_by("created_at", "id")
        )
        ids = list(locked.values_list("pk", flat=True))
        if not ids:
            return []
        Run.objects.filter(pk__in=ids, status__in=statuses).update(
            status=Run.Status.CANCELLED, finished_at=now, waiting_for=""
        )
        count_ended_runs(Run.objects.filter(pk__in=ids))
        runs = list(
            Run.objects.select_related("session")
            .filter(pk__in=ids)
            .order_by("created_at", "id")
        )
        for run in runs:
            expire_stopped(run=run)
    for run in runs:
        _announce(run)
    return runs
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
    _announce(run)
    return run


def _announce(run: Run) -> None:
    """A run just cancelled: stop its turn wherever it runs, tell every page."""
    stops.request_stop(run_id=run.pk)
    logger.info("turn cancelled run=%s", run.pk)
    record_and_publish(
        session=run.session,
        kind="run_finished",
        invocation_id=run.invocation_id,
        data={"run": run_out(run)},
    )
