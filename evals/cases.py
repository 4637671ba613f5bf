"""A set's cases: added (by hand, from a session, imported), changed, deleted.

A case's eval_id is unique in its set; one not given is made from the set's
next position (`case_1`, `case_2`, ...), the way ADK's web UI names them.
"""

import re
from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from evals.models import EvalCase, EvalSet
from project.errors import DomainError, NotFoundError

EVAL_ID_MAX = 200


class EvalIdTaken(DomainError):
    field = "eval_id"
    code = "eval_id_taken"


def add_case(
    *,
    eval_set: EvalSet,
    conversation: Sequence[dict[str, Any]],
    eval_id: str = "",
    session_input: dict[str, Any] | None = None,
    expectations: Sequence[dict[str, Any]] = (),
    source_session=None,
    created_by=None,
) -> EvalCase:
    """A new case at the end of the set; a taken eval_id is refused."""
    with transaction.atomic():
        # The set's row, locked: two cases added at once take two positions.
        EvalSet.objects.select_for_update().filter(pk=eval_set.pk).first()
        last = eval_set.cases.aggregate(last=Max("position"))["last"]
        position = 0 if last is None else last + 1
        case = EvalCase(
            eval_set=eval_set,
            eval_id=eval_id or _free_eval_id(eval_set, position),
            position=position,
            conversation=list(conversation),
            session_input=session_input or {},
            expectations=list(expectations),
            source_session=source_session,
            created_by=created_by,
        )
        _save(case)
        eval_set.save(update_fields=["updated_at"])
    return case


def update_case(*, case: EvalCase, changes: dict[str, Any]) -> EvalCase:
    """Change a case's eval_id, conversation, session input or expectations."""
    fields = ("eval_id", "conversation", "session_input", "expectations")
    for field in fields:
        if field in changes:
            setattr(case, field, changes[field])
    with transaction.atomic():
        _save(case)
        case.eval_set.save(update_fields=["updated_at"])
    return case


def delete_case(*, case: EvalCase) -> None:
    with transaction.atomic():
        case.delete()
        case.eval_set.save(update_fields=["updated_at"])


def get_case(*, eval_set: EvalSet, case_id: int) -> EvalCase:
    case = eval_set.cases.filter(pk=case_id).first()
    if case is None:
        raise NotFoundError(_("No such case in this set."))
    return case


def slug(text: str, *, fallback: str = "case") -> str:
    """`text` as ADK's ids are spelled ([a-zA-Z0-9_]), at most EVAL_ID_MAX long."""
    spelled = re.sub(r"[^a-zA-Z0-9_]+", "_", text).strip("_")[:EVAL_ID_MAX]
    return spelled or fallback


def free_eval_id(eval_set: EvalSet, base: str) -> str:
    """`base`, or `base_2`, `base_3`, ...: the first the set has no case of."""
    taken = set(eval_set.cases.values_list("eval_id", flat=True))
    if base not in taken:
        return base
    number = 2
    while f"{base[: EVAL_ID_MAX - 8]}_{number}" in taken:
        number += 1
    return f"{base[: EVAL_ID_MAX - 8]}_{number}"


def _free_eval_id(eval_set: EvalSet, position: int) -> str:
    taken = set(eval_set.cases.values_list("eval_id", flat=True))
    number = position + 1
    while f"case_{number}" in taken:
        number += 1
    return f"case_{number}"


def _save(case: EvalCase) -> None:
    try:
        with transaction.atomic():
            case.save()
    except IntegrityError:
        raise EvalIdTaken(
            _("This set already has a case %(id)s.") % {"id": case.eval_id}
        ) from None
