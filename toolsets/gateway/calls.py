"""A client's tool call: the same governance as an agent's, audited with its name.

A call runs through toolsets.governance.direct (ADK's tool pipeline with a turn's
plugins): grants and their conditions, the catalog's approval gate, the policy
(argument validation, rate limit, cache, timeout, retries, concurrency) and
credentials, one ToolCall row whose agent is the client's name (MCP's
`clientInfo.name`). The gateway refuses on its own, with an audit row too, only
what never reaches governance: a name the caller's tool list does not have, and
arguments that break the input rule of every client message (agents/inputs.py).

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

from django.utils import timezone

from agents.events.wire import (
    EventFrame,
    FunctionCallOut,
    FunctionResponseOut,
    WireEvent,
)
from agents.inputs import (
    REPLACEMENT,
    BadJson,
    BadText,
    check_json,
    replace_surrogates,
)
from agents.realtime import streams
from agents.redaction import redact_secrets
from project.errors import DomainError, NotFoundError
from toolsets.gateway.auth import Caller
from toolsets.gateway.catalog import GatewayTool, afind_tool
from toolsets.governance import direct
from toolsets.governance.plugin import summarize
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


async def acall_tool(
    *, caller: Caller, name: str, args: Mapping[str, Any] | None, client: str
) -> Outcome:
    """Run the caller's tool `name` with `args`, governed and audited.

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
    return await _ring(
        caller, client, tool, checked, await _run(caller, client, tool, checked)
    )


def _checked(args: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, str]:
    """The arguments if they keep the input rule of client messages, else why not."""
    try:
        return check_json(dict(args or {})), ""
    except (BadJson, BadText) as exc:
        return None, f"Invalid arguments: {exc}"


async def _run(
    caller: Caller, client: str, tool: GatewayTool, args: dict[str, Any]
) -> Outcome:
    try:
        invocation = await direct.ainvoke_tool(
            user=caller.user, full_name=tool.full_name, args=args, agent=client
        )
    except direct.NeedsPerson:
        return _refused(_needs_person(tool), direct.NeedsPerson.code)
    except DomainError as exc:
        return _refused(str(exc), exc.code)
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


def _needs_person(tool: GatewayTool) -> str:
    return (
        f"{tool.name} needs a person's approval (or a credential of yours) before it "
        "runs, and the MCP gateway cannot hold a call for a person yet: it did not "
        "run. Ask for it in a Toolcrib session (the web app), where the request "
        "goes to the approver's inbox."
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
    await ToolCall.objects.acreate(
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
        logger.warning("firehose publish failed call=%s", call_id, exc_info=True)
    return outcome
