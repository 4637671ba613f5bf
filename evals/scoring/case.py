"""One case scored: its criteria (the set's, ADK's test_config.json shapes) over
what the agent did, and its governance expectations over the audit."""

from collections.abc import Mapping, Sequence
from typing import Any

from evals.running.actual import answer_of, calls_of
from evals.running.recordings import expected_calls, invocations, text_of
from evals.scoring import expectations as expected_outcomes
from evals.scoring.judge import judge_errors, judge_score
from evals.scoring.response import response_score
from evals.scoring.trajectory import (
    ARGS_EXACT,
    ARGS_IGNORED,
    ARGS_SUBSET,
    EXACT,
    MATCH_TYPES,
    trajectory_score,
)
from evals.scoring.verdict import NOT_RUN, scored

TRAJECTORY = "tool_trajectory_avg_score"
RESPONSE = "response_match_score"
JUDGE = "final_response_match_v2"


def criterion(value: Any) -> dict[str, Any]:
    """A criterion as {threshold, options...}: ADK writes a number or an object."""
    if isinstance(value, Mapping):
        return dict(value)
    return {"threshold": value}


def criteria_errors(criteria: Any) -> list[str]:
    """What is wrong with a set's criteria, in words (empty: nothing)."""
    if not isinstance(criteria, Mapping):
        return ["criteria are an object of metric name to threshold"]
    errors = []
    for name, value in criteria.items():
        spec = criterion(value)
        threshold = spec.get("threshold")
        if not isinstance(threshold, (int, float)) or isinstance(threshold, bool):
            errors.append(f"{name}: a threshold is a number")
        if name == TRAJECTORY:
            if str(spec.get("match_type", EXACT)).upper() not in MATCH_TYPES:
                errors.append(f"{name}: match_type is one of {', '.join(MATCH_TYPES)}")
            if spec.get("args", ARGS_EXACT) not in (ARGS_EXACT, ARGS_SUBSET):
                errors.append(f"{name}: args is exact or subset")
        elif name == JUDGE and not errors:
            errors.extend(judge_errors(name, spec))
    return errors


def score_case(
    *,
    conversation: Sequence[Any],
    case_expectations: Sequence[Mapping[str, Any]],
    turns: Sequence[dict[str, Any]],
    criteria: Mapping[str, Any],
    session_id: str,
    held: bool,
) -> tuple[dict[str, Any], bool]:
    """The case's scores ({metric: {score, threshold, passed, status}}) and whether
    it passed. A case that ended on a held call (never approved) is scored on the
    turns it reached."""
    expected = invocations(conversation)
    if held:
        expected = expected[: len(turns)]
    scores: dict[str, Any] = {}
    for name, value in criteria.items():
        spec = criterion(value)
        threshold = float(spec["threshold"])
        if name == TRAJECTORY:
            args = (
                ARGS_IGNORED
                if spec.get("ignore_args")
                else spec.get("args", ARGS_EXACT)
            )
            match_type = str(spec.get("match_type", EXACT)).upper()
            score = trajectory_score(
                [calls_of(turn) for turn in turns],
                [expected_calls(invocation) for invocation in expected],
                match_type=match_type,
                args=args,
            )
            scores[name] = scored(score, threshold, match_type=match_type, args=args)
        elif name == RESPONSE:
            score = response_score(
                [answer_of(turn) for turn in turns],
                [text_of(invocation.final_response) for invocation in expected],
            )
            scores[name] = scored(score, threshold)
        elif name == JUDGE:
            scores[name] = judge_score(spec, actual=turns, expected=expected)
        else:
            reason = "a metric Toolcrib does not compute"
            scores[name] = {"status": NOT_RUN, "threshold": threshold, "reason": reason}
    if case_expectations:
        checked = expected_outcomes.check(case_expectations, session_id=session_id)
        met = sum(1 for item in checked if item["met"])
        scores["expectations"] = {
            "score": met / len(checked),
            "threshold": 1.0,
            "passed": met == len(checked),
            "status": "passed" if met == len(checked) else "failed",
            "items": checked,
        }
    passed = all(
        s.get("passed", True) for s in scores.values() if s["status"] != NOT_RUN
    )
    return scores, passed
