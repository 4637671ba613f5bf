"""ADK's files, in and out: `.evalset.json` and `test_config.json`.

Both are read and written by ADK's own pydantic models
(google.adk.evaluation.eval_set.EvalSet, eval_case.EvalCase, eval_config.EvalConfig),
so what is exported here loads in `adk eval` (its local loader,
local_eval_sets_manager.load_eval_set_from_file) and a file written for `adk eval`,
in either spelling ADK reads (camelCase or snake_case in a case), imports here.
An export is written as ADK's LocalEvalSetsManager writes a set: snake_case, no
empty or default fields.

A case's governance expectations, Toolcrib's own, travel in the case under
`toolcrib_expectations`, a field ADK's EvalCase keeps and ignores. A file with an
error anywhere stores nothing, and each error names its case (index and eval_id).
"""

import json
from typing import Any

import pydantic
from django.db import transaction
from django.utils.translation import gettext as _
from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.evaluation.eval_config import EvalConfig
from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

from evals.cases import slug
from evals.models import EvalCase, EvalSet
from evals.models.sets import default_criteria
from evals.sets import create_set
from evals.shapes import (
    MAX_INVOCATIONS,
    clean_criteria,
    clean_expectations,
    errors_of,
    invocation_json,
)
from project.errors import DomainError

EXPECTATIONS_KEY = "toolcrib_expectations"
MAX_CASES = 1000
NAME_MAX = 200
EVALSET_SUFFIX = ".evalset.json"


class BadEvalSetFile(DomainError):
    """A file that cannot be imported: `problems`, by the input they are about."""

    field = "evalset"
    code = "bad_evalset"

    def __init__(self, problems: dict[str, list[str]]) -> None:
        super().__init__(next(iter(problems.values()))[0])
        self.problems = problems


# Out.


def adk_eval_set(eval_set: EvalSet) -> AdkEvalSet:
    """The set as ADK's EvalSet, its cases in order."""
    return AdkEvalSet(
        eval_set_id=eval_set_id_of(eval_set),
        name=eval_set.name,
        description=eval_set.description or None,
        eval_cases=[adk_case(case) for case in eval_set.cases.order_by("position")],
        creation_timestamp=eval_set.created_at.timestamp(),
    )


def adk_case(case: EvalCase) -> AdkEvalCase:
    """One case as ADK's EvalCase (its expectations under EXPECTATIONS_KEY)."""
    data: dict[str, Any] = {
        "eval_id": case.eval_id,
        "conversation": case.conversation,
        "creation_timestamp": case.created_at.timestamp(),
    }
    if case.session_input:
        data["session_input"] = case.session_input
    if case.expectations:
        data[EXPECTATIONS_KEY] = case.expectations
    return AdkEvalCase.model_validate(data)


def eval_set_id_of(eval_set: EvalSet) -> str:
    """ADK's id of the set: its name as ADK spells ids ([a-zA-Z0-9_])."""
    return slug(eval_set.name, fallback=f"eval_set_{eval_set.pk}")


def evalset_json(eval_set: EvalSet) -> str:
    """The `.evalset.json` of a set, as ADK writes one."""
    return adk_eval_set(eval_set).model_dump_json(
        indent=2, exclude_none=True, exclude_defaults=True
    )


def test_config_json(eval_set: EvalSet) -> str:
    """The `test_config.json` of a set: its criteria."""
    config = {"criteria": eval_set.criteria}
    EvalConfig.model_validate(config)  # what adk eval will read
    return json.dumps(config, indent=2)


# In.


def import_eval_set(
    *,
    owner,
    evalset: Any,
    test_config: Any = None,
    name: str = "",
) -> EvalSet:
    """A new set of `owner`'s from an ADK `.evalset.json` (parsed) and, if given,
    a `test_config.json` (parsed; else ADK's default criteria).

    Raises:
        BadEvalSetFile: Either file does not hold what ADK reads; nothing stored.
        NameTaken: She has a set of that name already.
    """
    problems: dict[str, list[str]] = {}
    header, cases = _read_evalset(evalset, problems)
    criteria = _read_test_config(test_config, problems)
    if problems:
        raise BadEvalSetFile(problems)
    with transaction.atomic():
        eval_set = create_set(
            owner=owner,
            name=(name or header.name or header.eval_set_id)[:NAME_MAX],
            description=header.description or "",
            criteria=criteria,
        )
        EvalCase.objects.bulk_create(
            EvalCase(eval_set=eval_set, position=index, created_by=owner, **case)
            for index, case in enumerate(cases)
        )
    return eval_set


def _read_evalset(
    evalset: Any, problems: dict[str, list[str]]
) -> tuple[AdkEvalSet | None, list[dict[str, Any]]]:
    found = problems.setdefault("evalset", [])
    if not isinstance(evalset, dict):
        found.append(_("An .evalset.json holds one object (ADK's EvalSet)."))
        return None, []
    raw_cases = evalset.get("eval_cases")
    if not isinstance(raw_cases, list):
        found.append(
            _(
                "eval_cases: a list of cases is needed (ADK's EvalSet schema; an "
                "old-format file can be migrated with ADK's "
                "AgentEvaluator.migrate_eval_data_to_new_schema)."
            )
        )
        raw_cases = []
    if len(raw_cases) > MAX_CASES:
        found.append(_("At most %(n)d cases a file.") % {"n": MAX_CASES})
        raw_cases = []
    header = _header(evalset, found)
    cases, seen = [], set()
    for index, raw in enumerate(raw_cases):
        case, errors = _case(raw)
        eval_id = case["eval_id"] if case else _eval_id_given(raw)
        if case and eval_id in seen:
            errors = [_("another case has this eval_id")]
        seen.add(eval_id)
        found += [_case_problem(index, eval_id, error) for error in errors]
        if case and not errors:
            cases.append(case)
    if not found:
        del problems["evalset"]
    return header, cases


def _header(evalset: dict[str, Any], found: list[str]) -> AdkEvalSet | None:
    try:
        return AdkEvalSet.model_validate({**evalset, "eval_cases": []})
    except pydantic.ValidationError as exc:
        found.extend(errors_of(exc))
        return None


def _case(raw: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """A case of the file as stored, or the errors that refuse it."""
    try:
        case = AdkEvalCase.model_validate(raw)
    except pydantic.ValidationError as exc:
        return None, errors_of(exc)
    if case.conversation is None:
        return None, [
            _(
                "conversation_scenario: a simulated user is not run here; give the "
                "conversation."
            )
        ]
    if len(case.conversation) > MAX_INVOCATIONS:
        return None, [
            _("conversation: at most %(n)d invocations.") % {"n": MAX_INVOCATIONS}
        ]
    extra = case.model_extra or {}
    try:
        expectations = clean_expectations(extra.get(EXPECTATIONS_KEY, []))
    except ValueError as exc:
        return None, [f"{EXPECTATIONS_KEY}: {exc}"]
    session_input = (
        case.session_input.model_dump(mode="json", exclude_none=True)
        if case.session_input
        else {}
    )
    return {
        "eval_id": case.eval_id[:NAME_MAX],
        "conversation": [invocation_json(i) for i in case.conversation],
        "session_input": session_input,
        "expectations": expectations,
    }, []


def _eval_id_given(raw: Any) -> str:
    if isinstance(raw, dict):
        given = raw.get("eval_id", raw.get("evalId"))
        if isinstance(given, str):
            return given
    return ""


def _case_problem(index: int, eval_id: str, error: str) -> str:
    if eval_id:
        return _("case %(index)d (%(eval_id)s): %(error)s") % {
            "index": index,
            "eval_id": eval_id,
            "error": error,
        }
    return _("case %(index)d: %(error)s") % {"index": index, "error": error}


def _read_test_config(
    test_config: Any, problems: dict[str, list[str]]
) -> dict[str, Any]:
    if test_config is None:
        return default_criteria()
    found: list[str] = []
    if not isinstance(test_config, dict):
        found.append(_("A test_config.json holds one object (ADK's EvalConfig)."))
    else:
        found = _config_problems(test_config)
    if found:
        problems["test_config"] = found
        return {}
    return clean_criteria(test_config.get("criteria") or {})


def _config_problems(test_config: dict[str, Any]) -> list[str]:
    try:
        config = EvalConfig.model_validate(test_config)
    except pydantic.ValidationError as exc:
        return errors_of(exc)
    if config.custom_metrics:
        return [_("custom_metrics: custom metrics' code is not run here.")]
    try:
        clean_criteria(test_config.get("criteria") or {})
    except ValueError as exc:
        return [f"criteria: {exc}"]
    return []
