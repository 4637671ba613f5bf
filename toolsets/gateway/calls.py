"""A client's tool call: the same governance as an agent's, audited with its name.

A call runs through toolsets.governance.direct (ADK's tool pipeline with a turn's
plugins): grants and their conditions, the catalog's approval gate, the policy
(argument validation, rate limit, cache, timeout, retries, concurrency) and
credentials, one ToolCall row whose agent is the client's name (MCP's
`clientInfo.name`). The gateway refuses on its own, with an audit row too, only
what never reaches governance: a name the caller's tool list does not have, and
arguments that break the input rule of every client message (agents/inputs/rule.py).

A call held for a person's approval waits in the approver's inbox while the
client waits (approvals.py): approved, it runs again through every check, and
its result is the answer; rejected or expired, the answer says so; still pending
after TOOLCRIB_GATEWAY_APPROVAL_WAIT, the answer says "waiting for approval", and
the same call made again later waits again, or runs once approved. Its held
audit row reads the decision, as an agent's does (governance/decisions.py). A
call that needs a credential the user never gave is refused: nobody can give it
through MCP.

Every call rings the firehose (staff's live view of everything) with one
`function_response` event frame: a gateway call has no session, so the frame's
`session` is empty and its `seq` null; the ToolCall row is its record.
"""

import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils import timezone

from agents.client_input import (
    REPLACEMENT,
    BadJson,
    BadText,
    check_json,
    replace_surrogates,
)
from agents.models import Request
from agents.runtime import redact_secrets
from agents.timeline import (
    EventFrame,
    FunctionCallOut,
    FunctionResponseOut,
    WireEvent,
    streams,
)
from project import metrics
from project.errors import DomainError, NotFoundError
from toolsets.call_totals import create_call
from toolsets.gateway import approvals
from toolsets.gateway.approvals import Progress
from toolsets.gateway.auth import Caller
from toolsets.gateway.catalog import GatewayTool, afind_tool
from toolsets.governance import direct
from toolsets.governance.records import summarize
from toolsets.models import ToolCall

logger = logging.getLogger(__name__)

MAX_CLIENT_NAME = 100
UNNAMED_CLIENT = "mcp-client"
GATEWAY_ADK_AGENT = "mcp_gateway"


@dataclass(frozen=True)
class Outcome:
    """How a call ended, for the client: the result, or a refusal in words."""

    response: dict[str, Any]
    is_error: bool
    status: str
    message: str | None = None


class UnknownTool(NotFoundError):
    """The name is not one of the caller's tools now."""

    code = "unknown_tool"


def client_name(name: str | None) -> str:
    """The audit's agent for a client: its clientInfo.name, trimmed, storable."""
    cleaned = storable((name or "").strip())[:MAX_CLIENT_NAME]
    return cleaned or UNNAMED_CLIENT


def storable(text: str) -> str:
    """A client's text as the database takes it: no NUL, no lone surrogate."""
    return replace_surrogates(text).replace("\x00", REPLACEMENT)


async def _no_progress(done: float, total: float | None, message: str) -> None:
    return None


async def acall_tool(
    *,
    caller: Caller,
    name: str,
    args: Mapping[str, Any] | None,
    client: str,
    progress: Progress = _no_progress,
) -> Outcome:
    """Run the caller's tool `name` with `args`, governed and audited.

    A call held for approval waits for the decision (approvals.py); `progress`
    hears how long, for the client's progress notifications.

    Raises UnknownTool for a name the caller's tools do not have (audited as
    denied); every other refusal is an Outcome with is_error set.
    """
    tool = await afind_tool(caller=caller, name=name)
    checked, problem = _checked(args)
    if tool is None:
        name = storable(name)
        await _audit_refusal(
            caller,
            client,
            name,
            checked,
            ToolCall.Status.DENIED,
            f"Unknown tool: {name}",
        )
        raise UnknownTool(
            f"Unknown tool: {name}. tools/list shows the tools you may use now."
        )
    if checked is None:
        await _audit_refusal(
            caller, client, name, {}, ToolCall.Status.INVALID_ARGS, problem, tool
        )
        return await _ring(caller, client, tool, {}, _refused(problem, "invalid_args"))
    call = _Call(caller, client, tool, checked, approvals.args_digest(checked))
    owed = await approvals.afind_owed(
        caller=caller, full_name=tool.full_name, digest=call.digest
    )
    if owed is not None:
        outcome = await _adecided(call, owed, progress)
    else:
        outcome = await _run(call, progress)
    return await _ring(caller, client, tool, checked, outcome)


@dataclass(frozen=True)
class _Call:
    caller: Caller
    client: str
    tool: GatewayTool
    args: dict[str, Any]
    digest: str


def _checked(args: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, str]:
    """The arguments if they keep the input rule of client messages, else why not."""
    try:
        return check_json(dict(args or {})), ""
    except (BadJson, BadText) as exc:
        return None, f"Invalid arguments: {exc}"


async def _run(call: _Call, progress: Progress) -> Outcome:
    """Run the call; held for approval, wait for the decision."""
    invocation = await _invoke(call)
    if isinstance(invocation, Outcome):
        return invocation  # refused before it ran
    if invocation.held is None:
        return await _outcome(call, invocation)
    request = await approvals.ahold(
        caller=call.caller,
        client=call.client,
        full_name=call.tool.full_name,
        args=call.args,
        digest=call.digest,
        held=invocation.held,
    )
    return await _adecided(call, request, progress)


async def _adecided(call: _Call, request: Request, progress: Progress) -> Outcome:
    """Wait for the request's decision; approved, run the call (once)."""
    row = await approvals.await_decision(
        request=request,
        wait=settings.TOOLCRIB_GATEWAY_APPROVAL_WAIT,
        progress=progress,
    )
    if row.status == Request.Status.REJECTED:
        text = approvals.response_of(row)
        if text is not None:  # a person answered in the tool's place
            return Outcome(
                {"result": text},
                is_error=False,
                status=ToolCall.Status.REJECTED,
                message=text,
            )
        return _refused(approvals.rejected_message(row), ToolCall.Status.REJECTED)
    if row.status == Request.Status.EXPIRED:
        return _refused(approvals.expired_message(row), ToolCall.Status.EXPIRED)
    if row.status != Request.Status.APPROVED:
        return _waiting(row)
    if not await approvals.aclaim(row):
        return _refused(approvals.ran_message(row), "already_ran")
    invocation = await _invoke(
        call, confirmed=True, decision=approvals.decision_of(row)
    )
    if isinstance(invocation, Outcome):
        return invocation
    return await _outcome(call, invocation)


async def _invoke(
    call: _Call,
    *,
    confirmed: bool = False,
    decision: Mapping[str, Any] | None = None,
) -> direct.Invocation | Outcome:
    """Run the call through governance (`confirmed`: its approval is given, with
    the approver's `decision`: the arguments she changed it to); a refusal before
    it ran is the client's Outcome."""
    try:
        return await direct.arun_tool(
            user=call.caller.user,
            full_name=call.tool.full_name,
            args=call.args,
            agent=call.client,
            confirmed=confirmed,
            decision=decision,
        )
    except DomainError as exc:
        return _refused(str(exc), exc.code)


async def _outcome(call: _Call, invocation: direct.Invocation) -> Outcome:
    """What the client reads of a call that ran, or asked for a credential."""
    if invocation.needs_person:
        await direct.arefuse(invocation.call, "needs a person")
        return _refused(_needs_credential(call.tool), direct.NeedsPerson.code)
    if invocation.success:
        return Outcome(
            invocation.response, is_error=False, status=invocation.call.status
        )
    return Outcome(
        invocation.response,
        is_error=True,
        status=invocation.call.status,
        message=invocation.error,
    )


def _needs_credential(tool: GatewayTool) -> str:
    return (
        f"{tool.name} needs a credential of yours before it runs, and the MCP "
        "gateway cannot ask you for one: it did not run. Call it once in a Toolcrib "
        "session (the web app), where you give the credential; it is kept for you."
    )


def _waiting(request: Request) -> Outcome:
    message = approvals.waiting_message(request)
    expires = request.expires_at.isoformat() if request.expires_at else None
    return Outcome(
        {
            "status": approvals.WAITING,
            "request": request.pk,
            "expires_at": expires,
            "error_message": message,
        },
        is_error=True,
        status=ToolCall.Status.AWAITING_APPROVAL,
        message=message,
    )


def _refused(message: str, status: str) -> Outcome:
    return Outcome(
        {"status": "error", "error_message": message},
        is_error=True,
        status=status,
        message=message,
    )


async def _audit_refusal(
    caller: Caller,
    client: str,
    name: str,
    args: Mapping[str, Any] | None,
    status: str,
    summary: str,
    tool: GatewayTool | None = None,
) -> None:
    now = timezone.now()
    await sync_to_async(create_call)(
        user=caller.user,
        agent=client,
        adk_agent=GATEWAY_ADK_AGENT,
        call_id=f"mcp-{uuid.uuid4().hex}",
        tool_name=name[:200],
        tool_full_name=tool.full_name if tool else "",
        args=redact_secrets(dict(args or {})),
        result_summary=summary[:1000],
        status=status,
        access_rule="MCP gateway: not one of this credential's tools"
        if tool is None
        else "MCP gateway: the client input rule",
        started_at=now,
        finished_at=now,
        duration_ms=0,
        attempts=0,
    )
    # A name no catalog has is the client's text: one label for all of them.
    metrics.observe_tool_call(
        tool=tool.full_name if tool else "unknown", outcome=status, seconds=0
    )


async def _ring(
    caller: Caller,
    client: str,
    tool: GatewayTool,
    args: dict[str, Any],
    outcome: Outcome,
) -> Outcome:
    """Tell the firehose of the call (logged, not raised, if the layer is away)."""
    call_id = f"mcp-{uuid.uuid4().hex}"
    response = redact_secrets(outcome.response)
    event = WireEvent(
        id=call_id,
        author=client,
        kind="function_response",
        ts=time.time(),
        text=summarize(response) if outcome.is_error else None,
        function_calls=[
            FunctionCallOut(id=call_id, name=tool.full_name, args=redact_secrets(args))
        ],
        function_responses=[
            FunctionResponseOut(
                id=call_id,
                name=tool.full_name,
                response=response,
                status="error" if outcome.is_error else "ok",
            )
        ],
    )
    frame = EventFrame(seq=None, session="", event=event).model_dump(mode="json")
    message = {
        "type": streams.EVENT_MESSAGE,
        "frame": frame,
        "agent": client,
        "owner": caller.user.pk,
    }
    try:
        await streams.asend_to_groups([streams.firehose_group()], message)
    except streams.PUBLISH_ERRORS:
        metrics.count_publish_failure()
        logger.warning("firehose publish failed call=%s", call_id, exc_info=True)
    return outcome
