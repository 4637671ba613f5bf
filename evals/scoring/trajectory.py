"""`tool_trajectory_avg_score`, as ADK's TrajectoryEvaluator computes it, with one
more option: arguments compared exactly (ADK's) or as a subset (the expected
call's arguments all present in the actual call's, with equal values).

Per invocation 1.0 when the actual tool calls match the expected ones (EXACT: the
same calls in the same order, nothing more; IN_ORDER: the expected calls in
order, others between; ANY_ORDER: the expected calls in any order, others
between), else 0.0; the score is their mean. tests/evals/test_scoring.py checks it
against ADK's own evaluator on the same inputs.
"""

from collections.abc import Mapping, Sequence
from typing import Any

EXACT, IN_ORDER, ANY_ORDER = "EXACT", "IN_ORDER", "ANY_ORDER"
MATCH_TYPES = (EXACT, IN_ORDER, ANY_ORDER)
ARGS_EXACT, ARGS_SUBSET, ARGS_IGNORED = "exact", "subset", "ignore"

Call = Mapping[str, Any]  # {"name": ..., "args": {...}}


def same_call(actual: Call, expected: Call, *, args: str = ARGS_EXACT) -> bool:
    """One actual call against one expected: its name, then its arguments."""
    if actual.get("name") != expected.get("name"):
        return False
    if args == ARGS_IGNORED:
        return True
    got, want = actual.get("args") or {}, expected.get("args") or {}
    if args == ARGS_SUBSET:
        return all(key in got and got[key] == value for key, value in want.items())
    return got == want


def invocation_score(
    actual: Sequence[Call],
    expected: Sequence[Call],
    *,
    match_type: str = EXACT,
    args: str = ARGS_EXACT,
) -> float:
    """1.0 when the invocation's calls match the expected ones, else 0.0."""
    if match_type == EXACT:
        matched = len(actual) == len(expected) and all(
            same_call(a, e, args=args) for a, e in zip(actual, expected, strict=True)
        )
    elif match_type == IN_ORDER:
        matched = _in_order(actual, expected, args=args)
    elif match_type == ANY_ORDER:
        matched = _any_order(actual, expected, args=args)
    else:
        raise ValueError(f"Unknown match type {match_type!r}.")
    return 1.0 if matched else 0.0


def trajectory_score(
    actual: Sequence[Sequence[Call]],
    expected: Sequence[Sequence[Call]],
    *,
    match_type: str = EXACT,
    args: str = ARGS_EXACT,
) -> float | None:
    """The mean over the invocations (None for a case of none); an invocation the
    agent never reached has no calls."""
    if not expected:
        return None
    scores = [
        invocation_score(
            actual[index] if index < len(actual) else [],
            calls,
            match_type=match_type,
            args=args,
        )
        for index, calls in enumerate(expected)
    ]
    return sum(scores) / len(scores)


def _in_order(actual: Sequence[Call], expected: Sequence[Call], *, args: str) -> bool:
    if not expected:
        return True
    wanted = iter(expected)
    current = next(wanted)
    for call in actual:
        if same_call(call, current, args=args):
            current = next(wanted, None)
            if current is None:
                return True
    return False


def _any_order(actual: Sequence[Call], expected: Sequence[Call], *, args: str) -> bool:
    left = list(actual)
    for want in expected:
        index = next(
            (i for i, call in enumerate(left) if same_call(call, want, args=args)),
            None,
        )
        if index is None:
            return False
        left.pop(index)
    return True
