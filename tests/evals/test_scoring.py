"""Scores against ADK's own evaluators on the same inputs: the trajectory (EXACT,
IN_ORDER, ANY_ORDER) and ROUGE-1; plus what ADK lacks, arguments as a subset."""

import pytest
from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

from evals.scoring.response import response_score
from evals.scoring.trajectory import ARGS_SUBSET, trajectory_score
from tests.evals.conftest import invocation


def calls(*pairs):
    return [(name, args, {"ok": True}) for name, args in pairs]


A = ("get_weather", {"city": "London"})
B = ("get_time", {"city": "London"})
C = ("get_weather", {"city": "Paris"})
A_MORE = ("get_weather", {"city": "London", "units": "C"})

# (actual, expected) per invocation: equal, reordered, extra, missing, args changed.
TRAJECTORIES = [
    ([[A, B]], [[A, B]]),
    ([[B, A]], [[A, B]]),
    ([[A, C, B]], [[A, B]]),
    ([[A]], [[A, B]]),
    ([[A_MORE]], [[A]]),
    ([[A, B], [C]], [[A, B], [A]]),
    ([[]], [[]]),
    ([[A]], [[]]),
]


def adk_trajectory(actual, expected, match_type):
    metric = EvalMetric(
        metric_name="tool_trajectory_avg_score",
        criterion=ToolTrajectoryCriterion(
            threshold=1.0, match_type=ToolTrajectoryCriterion.MatchType[match_type]
        ),
    )
    as_invocations = [
        [
            Invocation.model_validate(invocation("q", calls=calls(*turn)))
            for turn in side
        ]
        for side in (actual, expected)
    ]
    result = TrajectoryEvaluator(eval_metric=metric).evaluate_invocations(
        *as_invocations
    )
    return result.overall_score


def ours(turns):
    return [[{"name": name, "args": args} for name, args in turn] for turn in turns]


@pytest.mark.parametrize("match_type", ["EXACT", "IN_ORDER", "ANY_ORDER"])
@pytest.mark.parametrize(("actual", "expected"), TRAJECTORIES)
def test_trajectory_scores_as_adk_does(actual, expected, match_type):
    mine = trajectory_score(ours(actual), ours(expected), match_type=match_type)

    assert mine == adk_trajectory(actual, expected, match_type)


def test_arguments_as_a_subset_accept_more_but_not_other_values():
    assert trajectory_score(ours([[A_MORE]]), ours([[A]]), args=ARGS_SUBSET) == 1.0
    assert trajectory_score(ours([[A_MORE]]), ours([[A]])) == 0.0
    assert trajectory_score(ours([[C]]), ours([[A]]), args=ARGS_SUBSET) == 0.0


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        ("London is foggy today.", "London is foggy today."),
        ("It rains in London", "London is rainy and cold"),
        ("The cats were running", "A cat runs"),
        ("", "Something"),
        ("東京は晴れです", "東京は雨です"),
    ],
)
def test_response_match_is_adks_rouge_1(actual, expected):
    metric = EvalMetric(metric_name="response_match_score", threshold=0.5)
    adk = RougeEvaluator(metric).evaluate_invocations(
        [Invocation.model_validate(invocation("q", answer=actual))],
        [Invocation.model_validate(invocation("q", answer=expected))],
    )

    assert response_score([actual], [expected]) == pytest.approx(adk.overall_score)
