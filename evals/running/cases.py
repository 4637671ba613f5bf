"""One eval case run: a fresh hidden session as the run's user (its state the
case's), the case's user turns sent in order through the same queue, workers,
governance and audit as anyone's turns, then scored.

A case that cannot run (a malformed conversation, an expectation of no known
kind, an agent that no longer loads) ends `error` with a message saying why; the
run goes on with the next case. A call held for approval is never approved: the
case ends there (a `held_for_approval` expectation is met).
"""

import logging
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _

from agents.models import AgentSpec, Run
from agents.runtime import (
    NothingRunning,
    RunEnded,
    cancel_session_run,
    create_eval_session,
    end_eval_session,
    start_turn,
    wait_for_run,
)
from evals.models import EvalCaseResult, EvalRun
from evals.running.actual import turn_of
from evals.running.recordings import invocations, text_of
from evals.scoring import expectations as expected_outcomes
from evals.scoring.case import score_case
from project.errors import DomainError

logger = logging.getLogger(__name__)

# How long one turn of a case may take before the case ends in error.
TURN_TIMEOUT_SECONDS = 300.0


class CaseError(Exception):
    """The case cannot run; its message says why, to the person reading results."""


def run_case(
    *,
    run: EvalRun,
    result: EvalCaseResult,
    agent: AgentSpec,
    user,
    cancelled: Callable[[], bool],
) -> None:
    """Run one case to its result (stored); never raises for the case's own faults."""
    try:
        _run(run=run, result=result, agent=agent, user=user, cancelled=cancelled)
    except (CaseError, ValueError, DomainError) as exc:
        result.status = EvalCaseResult.Status.ERROR
        result.error = str(exc)
    except Exception as exc:  # a bug must not lose the run: this case errs
        logger.exception("eval case crashed run=%s case=%s", run.pk, result.eval_id)
        result.status = EvalCaseResult.Status.ERROR
        result.error = _("The case could not run: %(error)s") % {"error": exc}
    finally:
        if result.session_id:
            end_eval_session(session=result.session)
    result.save()


def _run(*, run, result, agent, user, cancelled) -> None:
    case = result.case_snapshot
    conversation = case.get("conversation")
    steps = invocations(conversation)  # ValueError if malformed
    if not steps:
        raise CaseError(_("The case has no user turns."))
    for expectation in case.get("expectations") or []:
        problem = expected_outcomes.malformed(expectation)
        if problem:
            raise CaseError(problem)
    state = (case.get("session_input") or {}).get("state") or {}
    if not isinstance(state, dict):
        raise CaseError(_("The case's session state is not an object."))
    session = create_eval_session(user=user, agent=agent, state=state)
    if run.model:
        session.model = run.model
        session.save(update_fields=["model"])
    result.session = session
    result.save(update_fields=["session"])
    turns, held = [], False
    for step in steps:
        if cancelled():
            break
        turn = start_turn(
            session=session, user=user, text=text_of(step.user_content), eval=True
        )
        turn = wait_for_run(run=turn, timeout=TURN_TIMEOUT_SECONDS)
        if turn.status not in Run.TERMINAL:
            stop_turns(session)
            turn.refresh_from_db()
        turns.append(turn_of(turn))
        if turn.status == Run.Status.WAITING:
            held = True
            break
        if turn.status != Run.Status.SUCCEEDED:
            break
    _measure(result, turns)
    result.actual = turns
    result.scores, passed = score_case(
        conversation=conversation,
        case_expectations=case.get("expectations") or [],
        turns=turns,
        criteria=run.criteria,
        session_id=session.pk,
        held=held,
    )
    failed_turn = next(
        (t for t in turns if t["status"] in (Run.Status.FAILED, Run.Status.CANCELLED)),
        None,
    )
    result.status = (
        EvalCaseResult.Status.PASSED if passed else EvalCaseResult.Status.FAILED
    )
    if failed_turn is not None:
        result.error = failed_turn["error"] or _("A turn ended %(status)s.") % {
            "status": failed_turn["status"]
        }
        expectations = result.scores.get("expectations")
        # A turn that failed is an error, unless the case expected it to stop.
        if not (expectations and expectations["passed"]):
            result.status = EvalCaseResult.Status.ERROR


def stop_turns(session) -> None:
    """Stop the case session's turn that is queued or running, if any."""
    try:
        cancel_session_run(user=None, session=session)
    except (NothingRunning, RunEnded):
        pass


def _measure(result: EvalCaseResult, turns: list[dict[str, Any]]) -> None:
    result.tokens_in = sum(t["tokens_in"] for t in turns)
    result.tokens_out = sum(t["tokens_out"] for t in turns)
    result.cost = Decimal(sum(t["cost_micros"] for t in turns)) / Decimal(1_000_000)
    result.latency_ms = sum(t["latency_ms"] for t in turns)
