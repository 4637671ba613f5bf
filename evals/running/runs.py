"""An eval run: started (validated, its results pending, its driver dispatched),
driven case by case to its end, cancelled.

Who may run what: a set its reader may run (its owner, a member of a group it is
shared to, staff); as herself, or, for staff, as any active user; with an agent
that user may use (a version of it from the agent builder's versions, and a model
among the agent's that user is granted, checked as each turn starts). Every turn
goes through governance as that user.
"""

import logging
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from agents.models import AgentSpec, AgentVersion
from agents.runtime import AgentNotAvailable, get_usable_agent
from evals.models import EvalCaseResult, EvalRun, EvalSet
from evals.running import dispatch
from evals.running.cases import run_case, stop_turns
from project.errors import DomainError, NotFoundError

logger = logging.getLogger(__name__)


class RunInputError(DomainError):
    """A run's input names what cannot run: {field: [message]}."""

    status_code = 400
    code = "invalid"

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors


class RunEnded(DomainError):
    status_code = 409
    code = "run_ended"

    def __init__(self, status: str) -> None:
        super().__init__(
            _("This eval run has already ended (%(status)s).") % {"status": status}
        )


def readable_sets(*, user) -> QuerySet[EvalSet]:
    """The sets `user` may read and run: her own, her groups', all for staff."""
    if user.is_staff:
        return EvalSet.objects.all()
    return EvalSet.objects.filter(
        Q(owner=user) | Q(groups__in=user.groups.all())
    ).distinct()


def get_set(*, user, set_id: int) -> EvalSet:
    found = readable_sets(user=user).filter(pk=set_id).first()
    if found is None:
        raise NotFoundError(_("No such eval set."))
    return found


def visible_runs(*, user) -> QuerySet[EvalRun]:
    """The runs of the sets `user` may read."""
    return EvalRun.objects.filter(eval_set__in=readable_sets(user=user))


def get_run(*, user, run_id: int) -> EvalRun:
    found = visible_runs(user=user).filter(pk=run_id).first()
    if found is None:
        raise NotFoundError(_("No such eval run."))
    return found


def resolve(
    *, user, agent: str, agent_version: int | None, as_user: str | None
) -> tuple[Any, AgentSpec, AgentVersion | None]:
    """The run's user, agent and version, or RunInputError per field."""
    errors: dict[str, list[str]] = {}
    runner = user
    if as_user and as_user != user.get_username():
        people = get_user_model().objects.filter(is_active=True)
        found = people.filter(**{get_user_model().USERNAME_FIELD: as_user}).first()
        if not user.is_staff:
            errors["as_user"] = [_("Only staff may run a set as another user.")]
        elif found is None:
            errors["as_user"] = [_("No such active user.")]
        else:
            runner = found
    spec = version = None
    if "as_user" not in errors:
        try:
            spec = get_usable_agent(user=runner, name=agent)
        except DomainError:
            errors["agent"] = [_("No such agent, or its user may not use it.")]
    if spec is not None and agent_version is not None:
        version = AgentVersion.objects.filter(agent=spec, number=agent_version).first()
        if version is None:
            errors["agent_version"] = [_("The agent has no such version.")]
    if errors:
        raise RunInputError(errors)
    return runner, spec, version


def start_run(
    *,
    eval_set: EvalSet,
    user,
    agent: str,
    agent_version: int | None = None,
    model: str = "",
    as_user: str | None = None,
    live_tools: bool = False,
    threshold: float | None = None,
    dispatch_now: bool = True,
) -> EvalRun:
    """A queued run with a pending result per case; its driver starts once the
    transaction commits (a Celery worker, or a thread of this process)."""
    runner, spec, version = resolve(
        user=user, agent=agent, agent_version=agent_version, as_user=as_user
    )
    with transaction.atomic():
        run = EvalRun.objects.create(
            eval_set=eval_set,
            agent_name=spec.name,
            agent_version=version.number if version else None,
            model=model or "",
            as_user=runner,
            started_by=user,
            live_tools=live_tools,
            criteria=eval_set.criteria,
            threshold=threshold,
        )
        EvalCaseResult.objects.bulk_create(
            EvalCaseResult(
                run=run,
                case=case,
                eval_id=case.eval_id,
                position=index,
                case_snapshot={
                    "eval_id": case.eval_id,
                    "conversation": case.conversation,
                    "session_input": case.session_input,
                    "expectations": case.expectations,
                },
            )
            for index, case in enumerate(eval_set.cases.order_by("position", "id"))
        )
        if dispatch_now:
            dispatch.submit(run_id=run.pk, drive=execute_run)
    return run


def execute_run(run_id: int) -> EvalRun | None:
    """Drive a queued run to its end: each case in order, then the totals."""
    claimed = EvalRun.objects.filter(pk=run_id, status=EvalRun.Status.QUEUED).update(
        status=EvalRun.Status.RUNNING, started_at=timezone.now()
    )
    run = EvalRun.objects.select_related("as_user").filter(pk=run_id).first()
    if not claimed or run is None:
        return run
    try:
        spec, problem = _agent_of(run)
        for result in run.results.filter(status=EvalCaseResult.Status.PENDING):
            if _cancelled(run.pk):
                break
            if spec is None:
                result.status = EvalCaseResult.Status.ERROR
                result.error = problem
                result.save()
                continue
            run_case(
                run=run,
                result=result,
                agent=spec,
                user=run.as_user,
                cancelled=lambda: _cancelled(run.pk),
            )
    except Exception as exc:
        logger.exception("eval run crashed run=%s", run.pk)
        run.error = str(exc)
    finish(run)
    return run


def _agent_of(run: EvalRun) -> tuple[AgentSpec | None, str]:
    """The agent row this run runs (its version: the agent's current one, or its
    draft), or why it cannot: the agent deleted since, or the version not runnable."""
    try:
        spec = get_usable_agent(user=run.as_user, name=run.agent_name)
    except (AgentNotAvailable, DomainError):
        return None, _("The agent %(name)s no longer exists or may not be used.") % {
            "name": run.agent_name
        }
    if run.agent_version is None:
        return spec, ""
    latest = spec.versions.order_by("-number").first()
    wanted = spec.versions.filter(number=run.agent_version).first()
    if wanted is None:
        return None, _("The agent has no version %(n)s.") % {"n": run.agent_version}
    published = spec.versions.filter(status=AgentVersion.Status.PUBLISHED)
    current = published.order_by("-number").first()
    if current is not None and wanted.pk == current.pk:
        return spec, ""
    draft = AgentSpec.objects.filter(draft_of=spec).first()
    if draft is not None and latest is not None and wanted.pk == latest.pk:
        return draft, ""
    return None, _(
        "Version %(n)s is neither the agent's current version nor its draft: "
        "roll the agent back to it to run it."
    ) % {"n": run.agent_version}


def _cancelled(run_id: int) -> bool:
    status = EvalRun.objects.filter(pk=run_id).values_list("status", flat=True).first()
    return status == EvalRun.Status.CANCELLED


def finish(run: EvalRun) -> None:
    """The run's totals, score (the share of its cases that passed) and end."""
    results = list(run.results.all())
    totals = {"tokens_in": 0, "tokens_out": 0, "cost": 0.0, "latency_ms": 0}
    errors = 0
    for result in results:
        totals["tokens_in"] += result.tokens_in
        totals["tokens_out"] += result.tokens_out
        totals["cost"] += float(result.cost)
        totals["latency_ms"] += result.latency_ms
        errors += case_errors(result)
    totals["errors"] = errors
    totals["cost"] = round(totals["cost"], 6)
    counts = {status: 0 for status in EvalCaseResult.Status.values}
    for result in results:
        counts[result.status] += 1
    totals["cases"] = counts
    ran = [r for r in results if r.status != EvalCaseResult.Status.PENDING]
    passed = counts[EvalCaseResult.Status.PASSED]
    run.score = passed / len(results) if results else None
    threshold = 1.0 if run.threshold is None else run.threshold
    run.passed = (
        run.score is not None and run.score >= threshold and len(ran) == len(results)
    )
    run.totals = totals
    run.finished_at = timezone.now()
    fields = ["score", "passed", "totals", "finished_at", "error"]
    # A cancelled run stays cancelled; any other ends succeeded (it ran) or
    # failed (its driver crashed).
    ended = EvalRun.objects.filter(pk=run.pk).exclude(status=EvalRun.Status.CANCELLED)
    status = EvalRun.Status.FAILED if run.error else EvalRun.Status.SUCCEEDED
    if ended.update(status=status):
        run.status = status
    else:
        run.status = EvalRun.Status.CANCELLED
    run.save(update_fields=fields)


def case_errors(result: EvalCaseResult) -> int:
    """A case's errors: its tool calls that answered an error, its turns that
    failed, or the case itself that could not run."""
    if result.status == EvalCaseResult.Status.ERROR and not result.actual:
        return 1
    turns = result.actual or []
    failed = sum(1 for t in turns if t.get("status") == "failed")
    return sum(t.get("tool_errors", 0) for t in turns) + failed


def cancel_run(*, run: EvalRun) -> EvalRun:
    """End a queued or running run cancelled: the case running stops after its
    current turn is stopped; the cases not reached stay pending."""
    unfinished = (EvalRun.Status.QUEUED, EvalRun.Status.RUNNING)
    with transaction.atomic():
        was_queued = run.status == EvalRun.Status.QUEUED
        ended = EvalRun.objects.filter(pk=run.pk, status__in=unfinished).update(
            status=EvalRun.Status.CANCELLED
        )
        if not ended:
            run.refresh_from_db()
            raise RunEnded(run.status)
    run.refresh_from_db()
    if was_queued:
        finish(run)
        return run
    running = run.results.filter(
        status=EvalCaseResult.Status.PENDING, session__isnull=False
    ).select_related("session")
    for result in running:  # its turn stopped now, not when it ends
        stop_turns(result.session)
    return run
