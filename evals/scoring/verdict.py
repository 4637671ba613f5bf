"""A metric's verdict as a case's result stores it: its score against its threshold,
or why it did not run."""

from typing import Any

NOT_RUN = "not_run"


def scored(score: float | None, threshold: float, **options: Any) -> dict[str, Any]:
    """Passed or failed at `threshold`, with `options` (the metric's settings) kept;
    no score: not run, for want of turns."""
    if score is None:
        return {"status": NOT_RUN, "threshold": threshold, "reason": "no turns"}
    passed = score >= threshold
    return {
        "score": round(score, 4),
        "threshold": threshold,
        "passed": passed,
        "status": "passed" if passed else "failed",
        **options,
    }
