"""A person's answers to a pause (agents.requests): a long-running call's result,
a credential, and a decision on an approval, or on many at once.
"""

import json
from typing import Annotated, Any

from django.conf import settings
from pydantic import AfterValidator, ConfigDict, Field, ValidationInfo, field_validator
from pydantic.json_schema import SkipJsonSchema

from agents.inputs.rule import ClientInput, StoredJson, StoredText, check_text


def _not_too_big(value: dict[str, Any]) -> dict[str, Any]:
    limit = settings.TOOLCRIB_MAX_MESSAGE_CHARS
    if len(json.dumps(value)) > limit:
        raise ValueError(f"response is longer than {limit} characters of JSON")
    return value


CallResult = Annotated[StoredJson, AfterValidator(_not_too_big)]
"""A long-running call's result: a JSON object no longer than a message."""

COMMENT_MAX_CHARS = 2000
Comment = Annotated[
    str,
    Field(max_length=COMMENT_MAX_CHARS),
    AfterValidator(check_text),
    AfterValidator(str.strip),
]
"""A decider's comment, stored and shown with the decision."""

CallId = Annotated[StoredText, Field(min_length=1, max_length=128)]
Secret = Annotated[StoredText, Field(min_length=1, max_length=4096)]
# Left out rather than null; null is no type in the OpenAPI 3.0 schema.
OptionalSecret = Secret | SkipJsonSchema[None]


class FunctionResponseInput(ClientInput):
    """A long-running call's result; the agent resumes where it paused."""

    call_id: CallId
    response: CallResult


class CallResultInput(ClientInput):
    """A long-running call's result, for the request it answers (by the request's id)."""

    response: CallResult


class CredentialAnswer(ClientInput):
    """The secret, in the fields the request's scheme needs (docs/tools.md)."""

    # A rejected secret must not come back in an error message.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    api_key: OptionalSecret = None
    token: OptionalSecret = None
    username: OptionalSecret = None
    password: OptionalSecret = None
    access_token: OptionalSecret = None
    refresh_token: OptionalSecret = None


RESPONSE_MAX_CHARS = 20_000
AnswerText = Annotated[
    str,
    Field(min_length=1, max_length=RESPONSE_MAX_CHARS),
    AfterValidator(check_text),
]
"""What a person answers in a tool's place: the caller reads it as the result."""


class DecisionInput(ClientInput):
    """Approve or reject a tool call waiting for approval, with a comment if you like.

    `arguments` (with an approval): run the call with these arguments instead of
    the ones asked, whole (within the tool's schema and its grant's condition).
    `response` (with a rejection): the tool does not run, and its caller (the
    model, or the MCP client) reads this text as its answer.
    `remember` (with an approval, by the requester, where the catalog lets her
    decide her own calls of the tool): approve every later call of the tool in
    this session at once."""

    approved: bool = Field(strict=True)
    comment: Comment = ""
    remember: bool = Field(default=False, strict=True)
    arguments: StoredJson | SkipJsonSchema[None] = None
    response: AnswerText | SkipJsonSchema[None] = None

    @field_validator("remember")
    @classmethod
    def _only_approving(cls, value: bool, info: ValidationInfo) -> bool:
        if value and info.data.get("approved") is False:
            raise ValueError("only an approval is remembered: approve, or leave it out")
        return value

    @field_validator("arguments")
    @classmethod
    def _only_approved(cls, value: Any, info: ValidationInfo) -> Any:
        if value is not None and info.data.get("approved") is False:
            raise ValueError(
                "only an approved call runs with changed arguments: approve, or "
                "leave them out"
            )
        if value is not None:
            _not_too_big(value)
        return value

    @field_validator("response")
    @classmethod
    def _only_rejected(cls, value: Any, info: ValidationInfo) -> Any:
        if value is not None and info.data.get("approved") is True:
            raise ValueError(
                "a response answers in the tool's place, so the call does not run: "
                "reject it, or leave the response out"
            )
        return value

    def answer(self) -> dict[str, Any]:
        """The decision as the answer path takes it."""
        return self.model_dump(
            include={"approved", "comment", "remember", "arguments", "response"},
            exclude_none=True,
        )


DECIDE_AT_ONCE = 100


class BulkDecisionInput(ClientInput):
    """Approve or reject many approvals at once, with one comment: each is decided
    on its own (and may be refused on its own: decided before, not yours)."""

    ids: list[Annotated[int, Field(strict=True, ge=1, le=2**63 - 1)]] = Field(
        min_length=1, max_length=DECIDE_AT_ONCE
    )
    approved: bool = Field(strict=True)
    comment: Comment = ""
