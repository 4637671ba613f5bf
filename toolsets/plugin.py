"""GovernancePlugin: what the model is offered, what it may call, and the audit.

Exposure happens in `before_model_callback`, on every model step: ADK caches a
toolset's `get_tools` for a whole invocation, so filtering there would let a grant
revoked mid-turn live on until the turn ends. The request is pruned instead: the
function declarations the model sees and `llm_request.tools_dict`, which is what
ADK dispatches calls against, keep only what access allows right now.

Execution is checked again in `before_tool_callback`, for every call: a model may
call a tool it was never shown (ADK then hands the callback a placeholder tool,
which never runs). A refused call is answered with `{"status": "error",
"error_message": ...}` naming the rule, and the tool does not run.

Every governed call leaves one ToolCall row: from `after_tool_callback` (which ADK
also runs when `before_tool_callback` refused the call) or `on_tool_error_callback`.
ADK's own machinery (transfer_to_agent, adk_request_*, ...) is never governed.
"""

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.db.models import OuterRef, Subquery
from django.utils import timezone
from google.adk.agents.context import Context
from google.adk.models import LlmRequest, LlmResponse
from google.adk.plugins import BasePlugin
from google.adk.sessions import Session as AdkSession
from google.adk.tools import BaseTool
from google.genai import types

from agents.adk.sessions import session_rows
from agents.models import Run
from agents.redaction import redact_secrets
from toolsets import access, catalog, execution
from toolsets.access import Decision, Reason
from toolsets.approval_gate import acatalog_gate
from toolsets.bindings import Binding, abindings_for_invocation, is_internal
from toolsets.models import Tool, ToolCall

logger = logging.getLogger(__name__)

PLUGIN_NAME = "toolcrib_governance"
SUMMARY_CHARS = 1000


@dataclass
class _Pending:
    """A call between before_tool and after_tool (or on_tool_error)."""

    binding: Binding | None
    decision: Decision
    started_at: datetime
    started: float


class GovernancePlugin(BasePlugin):
    """Per-step exposure, per-call enforcement and the audit of every tool call."""

    def __init__(self, name: str = PLUGIN_NAME) -> None:
        super().__init__(name)
        self._pending: dict[str, _Pending] = {}
        # ADK session (app, user, id) -> its row's id and running Run, for the audit.
        self._sessions: dict[tuple[str, str, str], _Audited] = {}

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Offer the model only the tools this user may use now."""
        if not llm_request.tools_dict:
            return None
        found = await _bindings(callback_context)
        decisions = await _decisions(callback_context.user_id, found.values())
        refused = {
            name
            for name, tool in llm_request.tools_dict.items()
            if not is_internal(name, tool) and not _allowed(found.get(name), decisions)
        }
        if refused:
            prune_request(llm_request, refused)
        return None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict | None:
        """Refuse a call to a tool this user may not use now; the tool never runs."""
        if is_internal(tool.name, tool):
            return None
        binding = (await _bindings(tool_context)).get(tool.name)
        decision = await _decision_for(tool_context, binding, tool.name)
        self._pending[_call_key(tool_context, tool)] = _Pending(
            binding, decision, timezone.now(), time.perf_counter()
        )
        if decision.allowed and binding is not None:
            return await acatalog_gate(
                tool=tool, tool_context=tool_context, full_name=binding.full_name
            )
        if decision.allowed:
            return None
        return {
            "status": "error",
            "error_message": f"Tool {tool.name} is not available to you: "
            f"{decision.rule}.",
        }

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: Any,
    ) -> dict | None:
        """Audit the call: ok, error (as the result says), or denied."""
        pending = self._pending.pop(_call_key(tool_context, tool), None)
        outcome = execution.pop_outcome(tool_context, tool)
        if pending is None:
            return None
        attempts = outcome.attempts if outcome else 1
        if not pending.decision.allowed:
            status, attempts = ToolCall.Status.DENIED, 0
        elif outcome and outcome.status != ToolCall.Status.OK:
            status = outcome.status  # refused, cached, timed out, gave up retrying
        elif _is_error_result(result):
            status = ToolCall.Status.ERROR
        else:
            status = ToolCall.Status.OK
        await self._audit(
            tool_context, tool, tool_args, pending, status, result, attempts
        )
        return None

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        error: BaseException,
    ) -> dict | None:
        """Audit a call that raised (or timed out); ADK handles the error as usual."""
        pending = self._pending.pop(_call_key(tool_context, tool), None)
        outcome = execution.pop_outcome(tool_context, tool)
        if pending is None:
            return None
        timed_out = isinstance(error, (TimeoutError, asyncio.CancelledError))
        status = ToolCall.Status.TIMEOUT if timed_out else ToolCall.Status.ERROR
        summary = f"{type(error).__name__}: {error}"
        attempts = outcome.attempts if outcome else 1
        await self._audit(
            tool_context, tool, tool_args, pending, status, summary, attempts
        )
        return None

    async def _audit(
        self,
        context: Context,
        tool: BaseTool,
        args: Mapping[str, Any],
        pending: _Pending,
        status: str,
        result: Any,
        attempts: int = 1,
    ) -> None:
        session = context.session
        key = (session.app_name, session.user_id, session.id)
        if key not in self._sessions:
            self._sessions[key] = await _audited_session(session)
        audited = self._sessions[key]
        elapsed = timedelta(seconds=time.perf_counter() - pending.started)
        binding = pending.binding
        await _create_call(
            user_id=_django_user_id(context.user_id),
            session_id=audited.session_id,
            run_id=audited.run_id,
            invocation_id=context.invocation_id,
            agent=session.app_name,
            adk_agent=context.agent_name,
            call_id=context.function_call_id or "",
            tool_name=tool.name,
            tool_full_name=binding.full_name if binding else "",
            args=redact_secrets(dict(args)),
            result_summary=summarize(result),
            status=status,
            decided_by=pending.decision.rule,
            started_at=pending.started_at,
            finished_at=pending.started_at + elapsed,
            duration_ms=round(elapsed.total_seconds() * 1000),
            attempts=attempts,
        )


# Deciding.


async def _bindings(context: Context) -> dict[str, Binding]:
    found = await abindings_for_invocation(context)
    names = [binding.full_name for binding in found.values()]
    unknown = set(await access.auncatalogued(tools=names))
    if unknown:
        new = [b for b in found.values() if b.full_name in unknown]
        await sync_to_async(catalog.register)(new)
    return found


async def _decisions(
    adk_user_id: str, bindings: Iterable[Binding]
) -> dict[str, Decision]:
    user_id = _django_user_id(adk_user_id)
    if user_id is None:
        return {}
    names = {binding.full_name for binding in bindings}
    return await access.aexplain_many(user_id=user_id, tools=names)


async def _decision_for(
    context: Context, binding: Binding | None, name: str
) -> Decision:
    if binding is None:
        rule = f"{name} is not a tool of agent {context.agent_name}"
        return Decision(False, rule, Reason.UNKNOWN)
    user_id = _django_user_id(context.user_id)
    if user_id is None:
        return Decision(False, f"{context.user_id!r} is not a user", Reason.UNKNOWN)
    return await access.aexplain(user_id=user_id, tool=binding.full_name)


def _allowed(binding: Binding | None, decisions: Mapping[str, Decision]) -> bool:
    if binding is None:
        return False
    decision = decisions.get(binding.full_name)
    return decision is not None and decision.allowed


def _django_user_id(adk_user_id: str) -> int | None:
    return int(adk_user_id) if adk_user_id.isdigit() else None


def _call_key(context: Context, tool: BaseTool) -> str:
    return context.function_call_id or f"{context.invocation_id}:{tool.name}"


def prune_request(llm_request: LlmRequest, names: set[str]) -> None:
    """Remove tools from a request: the declarations, tools_dict and tool_config."""
    for name in names:
        llm_request.tools_dict.pop(name, None)
    kept_tools = []
    for tool in llm_request.config.tools or []:
        declarations = getattr(tool, "function_declarations", None)
        if not declarations:
            kept_tools.append(tool)
            continue
        tool.function_declarations = [d for d in declarations if d.name not in names]
        if tool.function_declarations or _has_other_capabilities(tool):
            kept_tools.append(tool)
    llm_request.config.tools = kept_tools or None
    calling = llm_request.config.tool_config and (
        llm_request.config.tool_config.function_calling_config
    )
    if calling and calling.allowed_function_names:
        calling.allowed_function_names = [
            n for n in calling.allowed_function_names if n not in names
        ]


def _has_other_capabilities(tool: types.Tool) -> bool:
    fields = tool.model_dump(exclude_none=True, exclude={"function_declarations"})
    return bool(fields)


# The audit record.


def _is_error_result(result: Any) -> bool:
    return isinstance(result, dict) and (
        "error" in result or result.get("status") == "error"
    )


def summarize(result: Any) -> str:
    """The result as short JSON (secrets redacted), for the audit."""
    if isinstance(result, str):
        text = result
    else:
        text = json.dumps(redact_secrets(result), default=str, ensure_ascii=False)
    if len(text) > SUMMARY_CHARS:
        return text[: SUMMARY_CHARS - 1] + "…"
    return text


@dataclass(frozen=True)
class _Audited:
    """What the audit names a call's session by: its row, and the Run driving it."""

    session_id: str
    run_id: uuid.UUID | None


@sync_to_async
def _audited_session(session: AdkSession) -> _Audited:
    """The row of an ADK session (scoped by app and user, as ADK scopes its ids)
    and its running Run, in one query; a session not stored keeps its ADK id."""
    runs = Run.objects.filter(session=OuterRef("pk"), status=Run.Status.RUNNING)
    running = Subquery(runs.order_by("-started_at").values("pk")[:1])
    found = session_rows(session).annotate(run=running).values_list("pk", "run")
    row = found.first()
    if row is None:
        return _Audited(session_id=session.id, run_id=None)
    return _Audited(session_id=row[0], run_id=row[1])


@sync_to_async
def _create_call(*, tool_full_name: str, **fields: Any) -> ToolCall:
    tool_id = None
    if tool_full_name:
        tools = Tool.objects.filter(full_name=tool_full_name)
        tool_id = tools.values_list("pk", flat=True).first()
    return ToolCall.objects.create(
        tool_full_name=tool_full_name, tool_id=tool_id, **fields
    )
