"""The eval app's models: sets and their cases (sets.py), runs and a result per
case (runs.py)."""

from .runs import EvalCaseResult, EvalRun
from .sets import EvalCase, EvalSet

__all__ = ["EvalCase", "EvalCaseResult", "EvalRun", "EvalSet"]
