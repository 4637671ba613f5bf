"""How a request reads to a person: what it asks, why it waits, who may answer it.

One wording for every kind, from what the request recorded (its tool, its answer
group, its hint, its scheme). A workflow's question (ADK 2.x's `adk_request_input`:
a node's `RequestInput` or `require_confirmation`) reads as a question, never as a
tool's result to post. ADK's own hint for a tool built with
`require_confirmation=True` is written for developers ("...by responding with a
FunctionResponse..."): it is never shown.
"""

from agents.adk.long_running import REQUEST_INPUT_CALL
from agents.models import Request

APPROVAL = Request.Kind.APPROVAL
CALL = Request.Kind.CALL
# In ADK's hint of a confirmation it asks itself, for a developer to read.
ADK_HINT_MARK = "FunctionResponse"
CREDENTIAL_NAMES = {
    "apiKey": "API key",
    "http": "credential",
    "oauth2": "OAuth access token",
    "openIdConnect": "OpenID Connect access token",
}


def title(request: Request) -> str:
    """What the request asks for, as a card's title."""
    tool = request.tool_name or "a tool"
    if request.kind == APPROVAL:
        return f"Approve a call of {tool}"
    if request.kind == CALL and request.tool_name == REQUEST_INPUT_CALL:
        return "Answer the workflow's question"  # the question is the description
    if request.kind == CALL:
        return f"Post the result of {tool}"
    return f"Give a credential for {tool}"


def reason(request: Request) -> str:
    """Why the call waits for a person."""
    if request.kind == APPROVAL:
        return approval_reason(request.hint)
    if request.kind == CALL and request.tool_name == REQUEST_INPUT_CALL:
        return "The workflow waits for a person's answer, and goes on with it."
    if request.kind == CALL:
        if request.answer_group:
            return (
                f"The tool waits for a member of {request.answer_group} "
                "to post its result."
            )
        return "The tool waits for its result to be posted."
    name = CREDENTIAL_NAMES.get(request.scheme, "credential")
    return f"The tool needs your {name} to go on; it is stored encrypted."


def approval_reason(hint: str) -> str:
    """Why a call waits for approval, from the hint it was asked with: the one
    wording of the inbox's card and of the audit's held row (toolsets.governance)."""
    text = hint.strip()
    if text and ADK_HINT_MARK not in text:
        return text
    return "The tool asks for a person's approval before each call."


def who_may_answer(request: Request) -> str:
    """Who may answer the request, by the one rule (agents.requests.rules)."""
    owner = request.requester
    requester = owner.get_username() if owner is not None else "the requester"
    group = request.answer_group
    if request.kind == Request.Kind.CREDENTIAL:
        return f"{requester} only: a credential is personal"
    if not group:
        return f"{requester}, or staff"
    if request.self_approval:
        return f"A member of {group} or staff, or {requester} (the requester)"
    return f"A member of {group} or staff (not {requester})"
