"""The kinds of request: what each records from an ADK event, and what its answer becomes.

- call: a long-running tool's call (`long_running_tool_ids`); the answer is the
  tool's result, posted as a JSON object. ADK 2.x's `adk_request_input` (a
  workflow node's RequestInput, a human-input node, a function node's
  require_confirmation) is one: the answer resumes the workflow (`{"result": x}`
  gives the node x).
- approval: ADK's `adk_request_confirmation` (a tool with `require_confirmation`,
  `request_confirmation(...)`, or the catalog's approval gate); the answer is a
  decision, `{"confirmed": bool}` to ADK, whose `payload` carries the arguments an
  approver changed the call to (edits.py), or her text in the tool's place; an
  approval may be one of several people's (quorum.py). A workflow tool node's
  call held by the gate asks ADK 2.x's node confirmation (`adk_request_input`
  under `wf_tool_confirmation:<node path>`, long_running.ask_node_approval): an
  approval too, its decision sent back under that id (`resume_id`).
- credential: ADK's `adk_request_credential` (`request_credential(...)`); the
  answer is the secret, sealed into a Credential row, and the Run's message only
  names that row.

Each kind also says how it expires (the answer the agent gets when nobody
answered in time) and how its refusals read, as clients have always read them.
"""

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import jsonschema
from django.utils import timezone
from google.adk.agents import BaseAgent
from google.adk.auth.auth_tool import AuthToolArguments
from google.adk.events import Event as AdkEvent
from google.genai import types
from pydantic import ValidationError

from agents.adk.auth import AUTH_CALL
from agents.adk.credentials import (
    CREDENTIAL_REF,
    scheme_of,
    seal_code_verifier,
    store_credential,
)
from agents.adk.event_kinds import CONFIRMATION_CALL
from agents.adk.long_running import (
    ANSWER_ARGUMENTS,
    ANSWER_EDITED_BY,
    ANSWER_RESPONSE,
    PAYLOAD_CALL_ID,
    PAYLOAD_CATALOG_TOOL,
    REQUEST_INPUT_CALL,
    answering_group,
    approval_rule,
    approvals_required,
    first_line,
    long_running_calls,
    node_approval,
    requester_may_approve,
    tool_description,
)
from agents.credentials import build_credential
from agents.models import Event, Request, Run, Session, StandingApproval
from agents.redaction import redact_secrets
from agents.requests import edits, quorum, rules
from agents.requests.errors import (
    AlreadyAnswered,
    AnswerDoesNotFit,
    CannotRemember,
    RequestNotFound,
    UnknownCall,
)
from project.errors import DomainError

logger = logging.getLogger(__name__)

Status = Request.Status


@dataclass(frozen=True)
class Reply:
    """What an answer becomes: the FunctionResponse that resumes the invocation,
    the request's status, and what the row keeps of it (never a secret): the
    result, and the decider's comment.

    `pending`: an approval counted that does not decide yet (the two-person rule,
    quorum.py): nothing resumes, the request waits for the next approver."""

    response: types.FunctionResponse
    status: str
    stored: dict[str, Any] | None = None
    comment: str = ""
    pending: bool = False


class RequestKind:
    """One kind of request. Subclasses say which calls pause and what answers them."""

    kind: str
    noun: str  # in refusals: "No such approval."
    verb: str  # "Only members of 'x' may decide this approval"
    statuses: tuple[str, ...]  # the statuses its listings filter by
    # An answer to an answered request is refused naming this field, with this code.
    answered_field: str
    answered_code: str = "already_answered"
    answered_message: str

    def calls(self, event: AdkEvent) -> list[types.FunctionCall]:
        """The calls of a complete event that pause for a request of this kind."""
        raise NotImplementedError

    async def arecord(
        self, call: types.FunctionCall, *, run: Run, event: AdkEvent, root: BaseAgent
    ) -> Request | None:
        """The pending request a call asks for (unsaved); None if it cannot be read."""
        raise NotImplementedError

    def reply(
        self,
        request: Request,
        answer: Mapping[str, Any],
        *,
        session: Session | None,
        user,
    ) -> Reply:
        """What `user`'s answer becomes (`session` is None for a gateway call's)."""
        raise NotImplementedError

    def expired(self, request: Request) -> Reply:
        """What the agent gets when nobody answered in time."""
        raise NotImplementedError

    def not_found(self) -> DomainError:
        """The refusal of a request the user may not see, or that is not there."""
        return RequestNotFound(self.noun)

    def already_answered(self) -> AlreadyAnswered:
        """The refusal of an answer to a request answered before."""
        return AlreadyAnswered(
            field=self.answered_field,
            code=self.answered_code,
            message=self.answered_message,
        )

    def _pending(self, call: types.FunctionCall, run: Run, event: AdkEvent, **fields):
        return Request(
            kind=self.kind,
            session_id=run.session_id,
            run_id=run.pk,
            call_id=call.id or "",
            agent=event.author or "",
            invocation_id=event.invocation_id or "",
            **fields,
        )


class CallKind(RequestKind):
    kind = Request.Kind.CALL
    noun = "call"
    verb = "answer"
    statuses = (Status.PENDING, Status.ANSWERED)
    answered_field = "call_id"
    answered_message = "This call has already been answered."

    def calls(self, event: AdkEvent) -> list[types.FunctionCall]:
        return long_running_calls(event)

    def not_found(self) -> DomainError:
        # A call is named by its id in a body posted to a session's URL: a field.
        return UnknownCall()

    async def arecord(self, call, *, run, event, root) -> Request:
        name = call.name or ""
        group = answering_group(root, author=event.author, tool_name=name)
        return self._pending(
            call,
            run,
            event,
            tool_call_id=call.id or "",
            tool_name=name,
            args=dict(call.args or {}),
            answer_group=group,
            description=_asked(call)
            or tool_description(root, author=event.author, tool_name=name),
        )

    def reply(self, request, answer, *, session, user) -> Reply:
        result = dict(answer)
        _check_asked_schema(request, result)
        response = types.FunctionResponse(
            id=adk_call_id(request), name=request.tool_name, response=result
        )
        return Reply(response, Status.ANSWERED, stored=result)

    def expired(self, request: Request) -> Reply:
        result = {"status": "expired", "error": "Nobody answered in time."}
        response = types.FunctionResponse(
            id=adk_call_id(request), name=request.tool_name, response=result
        )
        return Reply(response, Status.EXPIRED, stored=result)


class ApprovalKind(RequestKind):
    kind = Request.Kind.APPROVAL
    noun = "approval"
    verb = "decide"
    statuses = (Status.PENDING, Status.APPROVED, Status.REJECTED, Status.EXPIRED)
    answered_field = "approved"
    answered_code = "already_decided"
    answered_message = "This approval has already been decided."

    def calls(self, event: AdkEvent) -> list[types.FunctionCall]:
        if event.partial:
            return []
        return [
            c
            for c in event.get_function_calls()
            if c.name == CONFIRMATION_CALL or node_approval(c) is not None
        ]

    async def arecord(self, call, *, run, event, root) -> Request:
        original, confirmation, resume_id = _asked_approval(call)
        name = str(original.get("name") or "")
        payload = dict(confirmation.get("payload") or {})
        group, timeout = approval_rule(
            root, author=event.author, tool_name=name, payload=payload
        )
        pending = self._pending(
            call,
            run,
            event,
            tool_call_id=str(original.get("id") or ""),
            resume_id=resume_id,
            tool_name=name,
            args=dict(original.get("args") or {}),
            hint=str(confirmation.get("hint") or ""),
            answer_group=group,
            expires_at=expiry_after(timeout),
            self_approval=requester_may_approve(payload),
            approvals_required=approvals_required(payload),
            catalog_tool=str(payload.get(PAYLOAD_CATALOG_TOOL) or ""),
            description=tool_description(
                root, author=event.author, tool_name=name, payload=payload
            ),
        )
        if resume_id:
            # ADK asks a node's confirmation under one id in every turn that
            # reaches the node: the request is keyed by the held call's own.
            pending.call_id = pending.tool_call_id
        return pending

    def reply(self, request, answer, *, session, user) -> Reply:
        """Approve (maybe with changed arguments, maybe one approval of several),
        or reject (maybe with the text the caller gets instead of a run)."""
        comment = str(answer.get("comment") or "")
        if answer["approved"] is not True:
            return self._rejection(request, answer, comment)
        changed = edits.edited(request, arguments=answer.get("arguments"))
        if changed is not None:
            request.approved_args = redact_secrets(changed)
            request.args_edited_by = user
        if answer.get("remember"):
            self._remember(request, session=session, user=user)
        payload = None
        if request.approved_args is not None:
            edited_by = request.args_edited_by_id
            payload = {
                ANSWER_ARGUMENTS: request.approved_args,
                ANSWER_EDITED_BY: edited_by,
            }
        response = self._confirmation(request, confirmed=True, payload=payload)
        if not quorum.approve(request, user=user, comment=comment):
            return Reply(response, Status.PENDING, comment=comment, pending=True)
        return Reply(response, Status.APPROVED, comment=comment)

    def _rejection(self, request: Request, answer, comment: str) -> Reply:
        text = answer.get("response")
        if text is None:
            return Reply(
                self._confirmation(request, confirmed=False),
                Status.REJECTED,
                comment=comment,
            )
        # The caller reads the person's text as the tool's answer; nothing runs.
        payload = {ANSWER_RESPONSE: text}
        return Reply(
            self._confirmation(request, confirmed=False, payload=payload),
            Status.REJECTED,
            stored={"response": text},
            comment=comment,
        )

    def _remember(self, request: Request, *, session: Session, user) -> None:
        """Approve every later call of the tool in the session (standing.py)."""
        if user is None or not rules.may_remember(user=user, request=request):
            raise CannotRemember()
        StandingApproval.objects.get_or_create(
            session=session, tool_name=request.tool_name, defaults={"granted_by": user}
        )

    def expired(self, request: Request) -> Reply:
        # ADK tells the agent as it tells a rejection.
        return Reply(self._confirmation(request, confirmed=False), Status.EXPIRED)

    def _confirmation(
        self, request: Request, *, confirmed: bool, payload: dict | None = None
    ):
        response: dict[str, Any] = {"confirmed": confirmed}
        if payload is not None:
            response["payload"] = payload  # ADK's ToolConfirmation.payload
        if request.resume_id:  # a workflow tool node's: its node resumes
            return types.FunctionResponse(
                id=request.resume_id, name=REQUEST_INPUT_CALL, response=response
            )
        return types.FunctionResponse(
            id=request.call_id, name=CONFIRMATION_CALL, response=response
        )


class CredentialKind(RequestKind):
    kind = Request.Kind.CREDENTIAL
    noun = "credential request"
    verb = "answer"
    statuses = (Status.PENDING, Status.ANSWERED)
    answered_field = "status"
    answered_message = "This credential request has already been answered."

    def calls(self, event: AdkEvent) -> list[types.FunctionCall]:
        if event.partial:
            return []
        return [c for c in event.get_function_calls() if c.name == AUTH_CALL]

    async def arecord(self, call, *, run, event, root) -> Request | None:
        try:
            asked = AuthToolArguments.model_validate(call.args or {})
        except ValidationError:
            logger.warning("unreadable credential request call=%s", call.id)
            return None
        config = asked.auth_config
        name = await _atool_name(run, event, asked.function_call_id)
        return self._pending(
            call,
            run,
            event,
            tool_call_id=asked.function_call_id,
            tool_name=name,
            description=tool_description(root, author=event.author, tool_name=name),
            credential_key=config.credential_key or "",
            scheme=scheme_of(config),
            auth_config=redact_secrets(
                config.model_dump(mode="json", exclude_none=True)
            ),
            sealed_verifier=seal_code_verifier(config),
        )

    def reply(self, request, answer, *, session, user) -> Reply:
        row = store_credential(
            owner_id=user.pk,
            app_name=session.app_name,
            key=request.credential_key,
            scheme=request.scheme,
            credential=build_credential(request, answer),
            agent=request.agent,
            tool_name=request.tool_name,
        )
        # The Run's message names the sealed row; the secret is put back in memory
        # when the Run starts (agents.adk.credentials.ahydrate_message).
        return Reply(self._naming(request, row.pk), Status.ANSWERED)

    def expired(self, request: Request) -> Reply:
        # Names no row: the answer is empty, and the tool asks again.
        return Reply(self._naming(request, None), Status.EXPIRED)

    def _naming(self, request: Request, ref: int | None) -> types.FunctionResponse:
        return types.FunctionResponse(
            id=request.call_id, name=AUTH_CALL, response={CREDENTIAL_REF: ref}
        )


CALL = CallKind()
APPROVAL = ApprovalKind()
CREDENTIAL = CredentialKind()
KINDS: dict[str, RequestKind] = {k.kind: k for k in (CALL, APPROVAL, CREDENTIAL)}


def adk_call_id(request: Request) -> str:
    """The id ADK gave the call a request answers: a call's own (`tool_call_id`;
    `call_id` may be a later ask's own key, record.py)."""
    return request.tool_call_id or request.call_id


def _asked(call: types.FunctionCall) -> str:
    """What a workflow's request for input (ADK 2.x `RequestInput`) asks a person,
    in its own words: its message; "" for any other call."""
    if call.name != REQUEST_INPUT_CALL:
        return ""
    return first_line(str((call.args or {}).get("message") or ""))


def _asked_approval(call: types.FunctionCall) -> tuple[dict, dict, str]:
    """The call an approval holds, its confirmation (hint, payload) as ADK's
    `adk_request_confirmation` names them, and the id its decision resumes under
    when it is not the request's own ("" then)."""
    node = node_approval(call)
    if node is None:
        args = dict(call.args or {})
        return (
            args.get("originalFunctionCall") or {},
            args.get("toolConfirmation") or {},
            "",
        )
    payload = node["confirmation_payload"]
    original = {
        "id": str(payload[PAYLOAD_CALL_ID]),
        "name": node.get("tool_name") or "",
        "args": node.get("args") or {},
    }
    hint = (call.args or {}).get("message") or ""
    return original, {"hint": hint, "payload": payload}, call.id or ""


def _check_asked_schema(request: Request, answer: Mapping[str, Any]) -> None:
    """Refuse an answer to a workflow's question that its `response_schema` (JSON
    Schema, as ADK sends it) does not take: ADK reads `{"result": x}` as x, and
    any other object whole."""
    if request.tool_name != REQUEST_INPUT_CALL:
        return
    schema = (request.args or {}).get("response_schema")
    if not isinstance(schema, dict) or not schema:
        return
    value = answer["result"] if set(answer) == {"result"} else dict(answer)
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        raise AnswerDoesNotFit(exc.message) from None
    except jsonschema.SchemaError:  # ADK's schema, not the person's answer
        logger.warning("a workflow question's schema is invalid request=%s", request.pk)


def kind_of(request: Request) -> RequestKind:
    """The kind a stored request is of."""
    return KINDS[request.kind]


def expiry_after(timeout: float | None) -> datetime | None:
    """When a request asked now expires after `timeout` seconds (None: never)."""
    return None if timeout is None else timezone.now() + timedelta(seconds=timeout)


async def _atool_name(run: Run, event: AdkEvent, tool_call_id: str) -> str:
    """The name of the tool call that asked, read back from the invocation's events."""
    rows = Event.objects.filter(
        session_id=run.session_id,
        invocation_id=event.invocation_id,
        is_adk=True,
        kind="function_call",
    ).order_by("-seq")
    async for data in rows.values_list("data", flat=True)[:50]:
        for part in (data.get("content") or {}).get("parts") or []:
            call = part.get("function_call") or {}
            if call.get("id") == tool_call_id:
                return str(call.get("name") or "")
    return ""
