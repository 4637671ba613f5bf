"""What a set and a case hold, in ADK's own shapes, validated by ADK's models.

- criteria: `test_config.json`'s "criteria" (google.adk.evaluation.eval_config):
  a known metric name to a threshold in 0..1, or to an object with a threshold and
  the options of that metric's criterion class (`match_type` EXACT, IN_ORDER or
  ANY_ORDER for `tool_trajectory_avg_score`).
- a conversation: ADK `Invocation`s (eval_case.py), kept as ADK dumps them
  (snake_case), whichever spelling came in.
- a session input: ADK's `SessionInput` (app name, user id, state).
- expectations: Toolcrib's own, the governance outcomes a case asserts.

Each `clean_*` returns the value to store or raises ValueError with a message a
person reads (the input models of evals.inputs turn it into a field error).
"""

from enum import Enum
from typing import Any

import pydantic
from django.utils.translation import gettext as _
from google.adk.evaluation import eval_metrics as metrics
from google.adk.evaluation.eval_case import Invocation, SessionInput

# Metrics that report a value and never pass or fail: ADK refuses a threshold.
INFORMATIONAL = {
    metrics.PrebuiltMetrics.TOOL_CALL_COUNT_V1.value,
    metrics.PrebuiltMetrics.INFERENCE_CALL_COUNT_V1.value,
    metrics.PrebuiltMetrics.TOKEN_USAGE_V1.value,
    metrics.PrebuiltMetrics.INVOCATION_DURATION_V1.value,
}
P = metrics.PrebuiltMetrics
# Each metric's criterion class, as ADK's evaluators read it.
CRITERION_OF: dict[str, type[metrics.BaseCriterion]] = {
    P.TOOL_TRAJECTORY_AVG_SCORE.value: metrics.ToolTrajectoryCriterion,
    P.FINAL_RESPONSE_MATCH_V2.value: metrics.LlmAsAJudgeCriterion,
    P.RUBRIC_BASED_FINAL_RESPONSE_QUALITY_V1.value: metrics.RubricsBasedCriterion,
    P.RUBRIC_BASED_TOOL_USE_QUALITY_V1.value: metrics.RubricsBasedCriterion,
    P.RUBRIC_BASED_MULTI_TURN_TRAJECTORY_QUALITY_V1.value: (
        metrics.RubricsBasedCriterion
    ),
    P.HALLUCINATIONS_V1.value: metrics.HallucinationsCriterion,
    P.PER_TURN_USER_SIMULATOR_QUALITY_V1.value: (
        metrics.LlmBackedUserSimulatorCriterion
    ),
    P.MULTI_TURN_TASK_SUCCESS_V1.value: metrics.LlmAsAJudgeCriterion,
    P.MULTI_TURN_TRAJECTORY_QUALITY_V1.value: metrics.LlmAsAJudgeCriterion,
    P.MULTI_TURN_TOOL_USE_QUALITY_V1.value: metrics.LlmAsAJudgeCriterion,
}
METRICS = sorted(metric.value for metric in P if metric.value not in INFORMATIONAL)
MATCH_TYPES = [kind.name for kind in metrics.ToolTrajectoryCriterion.MatchType]

EXPECTATION_KINDS = (
    "denied",
    "held_for_approval",
    "refused_by_condition",
    "budget_stops",
)
MAX_INVOCATIONS = 200
MAX_EXPECTATIONS = 100
TOOL_NAME_MAX = 200


def clean_criteria(raw: Any) -> dict[str, Any]:
    """ADK criteria as stored: {metric: threshold or {threshold, options...}}."""
    if not isinstance(raw, dict):
        raise ValueError(_("Criteria are an object of metric names."))
    return {str(name): _criterion(str(name), value) for name, value in raw.items()}


def _criterion(name: str, value: Any) -> float | dict[str, Any]:
    if name not in METRICS:
        raise ValueError(
            _("Unknown metric %(name)s; known: %(known)s.")
            % {"name": name, "known": ", ".join(METRICS)}
        )
    if isinstance(value, bool) or not isinstance(value, int | float | dict):
        raise ValueError(
            _("%(name)s: a threshold from 0 to 1, or an object with one.")
            % {"name": name}
        )
    if not isinstance(value, dict):
        return _threshold(name, value)
    return _criterion_object(name, value)


def _threshold(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(_("%(name)s: the threshold is a number.") % {"name": name})
    if not 0 <= value <= 1:
        raise ValueError(_("%(name)s: the threshold is from 0 to 1.") % {"name": name})
    return float(value)


def _criterion_object(name: str, value: dict[str, Any]) -> dict[str, Any]:
    model = CRITERION_OF.get(name, metrics.BaseCriterion)
    known = set()
    for field_name, field in model.model_fields.items():
        known |= {field_name, field.alias or field_name}
    unknown = sorted(set(value) - known)
    if unknown:
        raise ValueError(
            _("%(name)s: unknown option %(option)s.")
            % {"name": name, "option": unknown[0]}
        )
    if "threshold" not in value:
        raise ValueError(_("%(name)s: a threshold is needed.") % {"name": name})
    _threshold(name, value["threshold"])
    try:
        criterion = model.model_validate(value)
    except pydantic.ValidationError as exc:
        raise ValueError(f"{name}: {_first_error(exc)}") from None
    return _criterion_json(criterion)


def _criterion_json(criterion: metrics.BaseCriterion) -> dict[str, Any]:
    """The criterion as test_config.json spells it: options given, enums by name."""
    dumped = criterion.model_dump(mode="python", exclude_unset=True)
    return {key: _named(item) for key, item in dumped.items()}


def _named(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, dict):
        return {key: _named(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_named(item) for item in value]
    return value


def clean_conversation(raw: Any) -> list[dict[str, Any]]:
    """A conversation of ADK Invocations, as ADK dumps them (snake_case)."""
    if not isinstance(raw, list) or not raw:
        raise ValueError(_("A conversation is a list of one or more invocations."))
    if len(raw) > MAX_INVOCATIONS:
        raise ValueError(
            _("A conversation has at most %(n)d invocations.") % {"n": MAX_INVOCATIONS}
        )
    cleaned = []
    for index, item in enumerate(raw):
        try:
            invocation = Invocation.model_validate(item)
        except pydantic.ValidationError as exc:
            raise ValueError(f"{index}: {_first_error(exc)}") from None
        cleaned.append(invocation_json(invocation))
    return cleaned


def invocation_json(invocation: Invocation) -> dict[str, Any]:
    """One ADK Invocation as stored: ADK's field names, nothing unset or empty."""
    return invocation.model_dump(mode="json", exclude_none=True)


def clean_session_input(raw: Any) -> dict[str, Any]:
    """ADK's SessionInput; a hand-written case may give only the state."""
    if not isinstance(raw, dict):
        raise ValueError(_("A session input is an object."))
    given = {"app_name": "", "user_id": "eval_user", **raw}
    try:
        session_input = SessionInput.model_validate(given)
    except pydantic.ValidationError as exc:
        raise ValueError(_first_error(exc)) from None
    return session_input.model_dump(mode="json", exclude_none=True)


def clean_expectations(raw: Any) -> list[dict[str, Any]]:
    """Governance outcomes: [{kind, tool, invocation?}], `tool` needed but for a
    budget stop (any call, or the model's, may meet the budget), which has none."""
    if not isinstance(raw, list):
        raise ValueError(_("Expectations are a list."))
    if len(raw) > MAX_EXPECTATIONS:
        raise ValueError(
            _("A case has at most %(n)d expectations.") % {"n": MAX_EXPECTATIONS}
        )
    return [_expectation(index, item) for index, item in enumerate(raw)]


def _expectation(index: int, item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ValueError(_("%(i)d: an expectation is an object.") % {"i": index})
    unknown = sorted(set(item) - {"kind", "tool", "invocation"})
    if unknown:
        raise ValueError(
            _("%(i)d: unknown field %(field)s.") % {"i": index, "field": unknown[0]}
        )
    kind, tool = item.get("kind"), item.get("tool", "")
    if kind not in EXPECTATION_KINDS:
        raise ValueError(
            _("%(i)d: kind is one of %(kinds)s.")
            % {"i": index, "kinds": ", ".join(EXPECTATION_KINDS)}
        )
    if not isinstance(tool, str) or len(tool) > TOOL_NAME_MAX:
        raise ValueError(_("%(i)d: tool is a tool's name.") % {"i": index})
    if not tool.strip() and kind != "budget_stops":
        raise ValueError(
            _("%(i)d: %(kind)s names the tool.") % {"i": index, "kind": kind}
        )
    cleaned: dict[str, Any] = {"kind": kind}
    if tool.strip():
        cleaned["tool"] = tool.strip()
    if "invocation" in item:
        cleaned["invocation"] = _invocation_index(index, item["invocation"])
    return cleaned


def _invocation_index(index: int, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            _("%(i)d: invocation is an invocation's index, from 0.") % {"i": index}
        )
    return value


def _first_error(exc: pydantic.ValidationError) -> str:
    return errors_of(exc, limit=1)[0]


def errors_of(exc: pydantic.ValidationError, *, limit: int = 5) -> list[str]:
    """pydantic's errors as `where: what`, the first `limit`."""
    found = []
    for error in exc.errors(include_input=False, include_url=False)[:limit]:
        where = ".".join(str(part) for part in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        found.append(f"{where}: {message}" if where else message)
    return found
