"""`final_response_match_v2`: ADK's LLM judge (its own FinalResponseMatchV2Evaluator)
over the case's answers against the expected ones, run only when the criterion names
a real judge model (`judge_model_options.judge_model`, not `offline/...`). The model
resolves through ADK's LLMRegistry, i.e. Toolcrib's model connections. A judge that
cannot be reached makes the metric `error`, never the case."""

import asyncio
import threading
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any

from django.conf import settings
from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_metrics import EvalMetric, LlmAsAJudgeCriterion
from google.adk.evaluation.final_response_match_v2 import (
    FinalResponseMatchV2Evaluator,
)
from google.genai.types import GenerateContentConfig, HttpOptions, HttpRetryOptions

from evals.scoring.verdict import NOT_RUN, scored

ERROR = "error"
OFFLINE = "offline/"


class _Judge(FinalResponseMatchV2Evaluator):
    """ADK's evaluator, keeping the samples' failures (ADK logs and drops them)."""

    def __init__(self, eval_metric: EvalMetric) -> None:
        super().__init__(eval_metric)
        self.failures: list[BaseException] = []

    async def _evaluate_single_sample(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super()._evaluate_single_sample(*args, **kwargs)
        except Exception as exc:
            self.failures.append(exc)
            raise


def judge_model(spec: Mapping[str, Any]) -> str:
    """The judge model a criterion names ('' for none)."""
    options = spec.get("judge_model_options")
    if not isinstance(options, Mapping):
        return ""
    return str(options.get("judge_model") or "")


def judge_errors(name: str, spec: Mapping[str, Any]) -> list[str]:
    """What is wrong with the judge's options, in words (empty: nothing)."""
    try:
        LlmAsAJudgeCriterion.model_validate(dict(spec))
    except Exception:
        return [
            f"{name}: judge_model_options is an object of judge_model (a model name) "
            "and num_samples (at least 1)"
        ]
    return []


def judge_score(
    spec: Mapping[str, Any],
    *,
    actual: Sequence[dict[str, Any]],
    expected: Sequence[Invocation],
) -> dict[str, Any]:
    """The metric's result: scored by the judge, `not_run` without a real judge
    model, `error` (with its message) when the judge fails."""
    threshold = float(spec["threshold"])
    model = judge_model(spec)
    if not model or model.startswith(OFFLINE):
        return {
            "status": NOT_RUN,
            "threshold": threshold,
            "reason": "the LLM judge runs only with a real judge model configured "
            "(judge_model_options.judge_model)",
        }
    if not expected:
        return scored(None, threshold)
    try:
        criterion = LlmAsAJudgeCriterion.model_validate(dict(spec))
        _retry_as_configured(criterion)
        evaluator = _Judge(
            EvalMetric(
                metric_name="final_response_match_v2",
                threshold=threshold,
                criterion=criterion,
            )
        )
        result = _run_sync(
            evaluator.evaluate_invocations(_actual(actual, expected), list(expected))
        )
    except Exception as exc:  # a bad option, an unknown model: said, not raised
        return _error(threshold, model, exc)
    if evaluator.failures:
        return _error(threshold, model, evaluator.failures[0])
    if result.overall_score is None:
        return {
            "status": NOT_RUN,
            "threshold": threshold,
            "judge_model": model,
            "reason": "the judge gave no verdict",
        }
    return scored(float(result.overall_score), threshold, judge_model=model)


def _actual(
    turns: Sequence[dict[str, Any]], expected: Sequence[Invocation]
) -> list[Invocation]:
    """The agent's turns as Invocations, one per expected one: a turn the agent never
    reached (a held or failed case) answered nothing."""
    actual = []
    for index, reference in enumerate(expected):
        if index < len(turns):
            turn = turns[index]
            actual.append(
                Invocation.model_validate(
                    {
                        "invocation_id": turn.get("invocation_id") or "",
                        "user_content": turn["user_content"],
                        "intermediate_data": turn["intermediate_data"],
                        "final_response": turn["final_response"],
                    }
                )
            )
        else:
            actual.append(
                Invocation(
                    user_content=reference.user_content,
                    final_response={"role": "model", "parts": [{"text": ""}]},
                )
            )
    return actual


def _retry_as_configured(criterion: LlmAsAJudgeCriterion) -> None:
    """Retries as Toolcrib's TOOLCRIB_MODEL_RETRIES says, not ADK's eval default (7
    attempts over minutes), unless the criterion sets its own judge_model_config."""
    options = criterion.judge_model_options
    if options.judge_model_config is None:
        options.judge_model_config = GenerateContentConfig(
            http_options=HttpOptions(
                retry_options=HttpRetryOptions(attempts=settings.TOOLCRIB_MODEL_RETRIES)
            )
        )


def _error(threshold: float, model: str, exc: BaseException) -> dict[str, Any]:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return {
        "status": ERROR,
        "threshold": threshold,
        "passed": False,
        "judge_model": model,
        "error": f"{type(exc).__name__}: {message}" if message else type(exc).__name__,
    }


def _run_sync(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run the evaluator in a fresh event loop: here, or in a thread of its own when
    the caller is already inside one (score_case is sync; it runs in the eval
    thread or a Celery worker, but must not nest loops if ever called from one)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="eval-judge")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
