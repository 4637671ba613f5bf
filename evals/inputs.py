"""What a client sends about eval sets: one model per message, for the REST edge
(evals.api) and any other. Each refuses a bad body with field errors before any
set, case or session is looked up."""

import uuid
from typing import Annotated, Any

from django.utils.translation import gettext as _
from pydantic import AfterValidator, Field, model_validator

from agents.client_input import ClientInput, StoredText
from evals.cases import EVAL_ID_MAX
from evals.shapes import (
    clean_conversation,
    clean_criteria,
    clean_expectations,
    clean_session_input,
)

NAME_MAX = 200
DESCRIPTION_MAX = 5000
GROUPS_MAX = 100
SEQ_MAX = 2**63 - 1


def _plain(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError(_("A name cannot be blank."))
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise ValueError(_("A name holds no control characters."))
    return value


def _eval_id(value: str) -> str:
    if not value or not all(
        char.isascii() and (char.isalnum() or char == "_") for char in value
    ):
        raise ValueError(_("An eval_id is letters, digits and _ (as ADK's ids)."))
    return value


Name = Annotated[StoredText, Field(max_length=NAME_MAX), AfterValidator(_plain)]
Description = Annotated[StoredText, Field(max_length=DESCRIPTION_MAX)]
GroupIds = Annotated[
    list[Annotated[int, Field(ge=1, le=SEQ_MAX)]], Field(max_length=GROUPS_MAX)
]
Criteria = Annotated[dict[str, Any], AfterValidator(clean_criteria)]
EvalId = Annotated[StoredText, Field(max_length=EVAL_ID_MAX), AfterValidator(_eval_id)]
Conversation = Annotated[list[Any], AfterValidator(clean_conversation)]
SessionInputJson = Annotated[dict[str, Any], AfterValidator(clean_session_input)]
Expectations = Annotated[list[Any], AfterValidator(clean_expectations)]
Seq = Annotated[int, Field(ge=1, le=SEQ_MAX)]


class SetInput(ClientInput):
    """A new eval set."""

    name: Name
    description: Description = ""
    groups: GroupIds = []
    criteria: Criteria | None = None


class SetChange(ClientInput):
    """A change to a set: any of its fields."""

    name: Name | None = None
    description: Description | None = None
    groups: GroupIds | None = None
    criteria: Criteria | None = None


class CaseInput(ClientInput):
    """A case written by hand: ADK Invocations, the state at the start, and the
    governance outcomes it asserts."""

    eval_id: EvalId | None = None
    conversation: Conversation
    session_input: SessionInputJson = {}
    expectations: Expectations = []


class CaseChange(ClientInput):
    """A change to a case: any of its fields."""

    eval_id: EvalId | None = None
    conversation: Conversation | None = None
    session_input: SessionInputJson | None = None
    expectations: Expectations | None = None


class FromSessionInput(ClientInput):
    """A case from a session: one turn (`run`), the turns of a seq range
    (`from_seq` to `to_seq`), or, with neither, the whole session."""

    session: Annotated[StoredText, Field(min_length=1, max_length=128)]
    run: uuid.UUID | None = None
    from_seq: Seq | None = None
    to_seq: Seq | None = None
    eval_id: EvalId | None = None

    @model_validator(mode="after")
    def _one_way(self) -> "FromSessionInput":
        ranged = self.from_seq is not None or self.to_seq is not None
        if self.run is not None and ranged:
            raise ValueError(_("Give a run or a seq range, not both."))
        if ranged and (self.from_seq is None or self.to_seq is None):
            raise ValueError(_("A seq range needs from_seq and to_seq."))
        if ranged and self.from_seq > self.to_seq:
            raise ValueError(_("from_seq comes before to_seq."))
        return self


class ImportInput(ClientInput):
    """An ADK `.evalset.json` (its parsed object) and, optionally, the
    `test_config.json` whose criteria the set takes; `name` over the file's."""

    evalset: Any
    test_config: Any = None
    name: Name | None = None
