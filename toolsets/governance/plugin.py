"""GovernancePlugin: what the model is offered, what it may call, and the audit.

One ADK plugin runs governance's checks (checks.CHECKS, in that order) at two points:

- Every model step (`before_model_callback`): the agent's bindings (which catalog
  toolset each of its tools belongs to) are resolved once, with access as of one
  read of its version counters (toolsets.access.asnapshot: one query, in one hop
  to the database that also reads the session's activation token from the cache
  and the user's grants if they changed), kept for the step's calls (a change counts from the next step), and
  each check removes from the request what it refuses: the function declarations
  the model sees and `llm_request.tools_dict`, which is what ADK dispatches calls
  against. Filtering a toolset's `get_tools` would not do: ADK
  caches it for a whole invocation, so a grant revoked mid-turn would live on.
- Every call (`before_tool_callback`): a model may call a tool it was never shown
  (ADK then hands the callback a placeholder tool, which never runs). The first
  check that refuses answers the call, and the tool does not run. A call every
  check lets through runs through execution.py's wrapper (timeout, retries,
  concurrency slots), which also notes that it ran.

Every governed call leaves one ToolCall row (written by records.py), from
`after_tool_callback` (which ADK also runs when a before-tool callback answered the call) or
`on_tool_error_callback`. Its result is what the model received: a callback that
runs after governance's (a later plugin's, the agent's own after_tool_callback)
may change it, so when the call's function response event comes by
(`on_event_callback`, after every callback) and says otherwise, the row is
brought up to it, the tool's own result kept beside it (`raw_result_summary`);
both redacted by agents.redaction's rule. Its status is the refusing check's; else
`awaiting_approval` for a call that asked a person (ADK's own confirmation gate,
or the tool itself); else how the run ended (ok, error, timeout, busy, or cancelled:
cut short by a person stopping its turn, agents.turns.cancel); else, for
a call that did not run though no check refused it, the agent's own
before_tool_callback (`refused`). ADK's own machinery (transfer_to_agent,
adk_request_*, ...) is never governed.

A governed tool that raises does not fail the turn: the model reads the error as
the call's result (`{"error": ...}`) and goes on, and the row says `error` with the
message; an agent in settings.TOOLCRIB_TOOL_ERRORS_FAIL_TURN fails its turn instead.

A held row becomes its decision when a person decides (decisions.py). The call ADK
runs again once decided writes a row only if it was approved: a rejected (or
expired) call never runs, and its held row already reads `rejected` (`expired`),
with who decided and when, so it is not audited twice.

What a turn needs between callbacks lives on the instance, per invocation
(turn.Turns), and goes when the invocation ends or the Runner closes;
agents.plugins builds one instance per turn, from its Run.
"""

import asyncio
import inspect
import logging
import time
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Self

from asgiref.sync import sync_to_async
from google.adk.agents.context import Context
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.adk.models import LlmRequest, LlmResponse
from google.adk.plugins import BasePlugin
from google.adk.sessions import Session as AdkSession
from google.adk.tools import BaseTool
from opentelemetry import trace

from agents.models import Run
from agents.pauses import (
    ANSWER_ARGUMENTS,
    ANSWER_EDITED_BY,
    ANSWER_RESPONSE,
    ask_node_approval,
    wording,
)
from agents.runtime import redact_secrets
from agents.timeline import is_error_response
from toolsets import access, activation, bindings, catalog
from toolsets.availability import afirst_call_choice
from toolsets.bindings import Binding, is_internal
from toolsets.governance import execution
from toolsets.governance.checks import CHECKS, django_user_id
from toolsets.governance.policies import remember_result
from toolsets.governance.records import (
    as_received,
    audited_of,
    held_decision,
    record_call,
    record_received,
    summarize,
)
from toolsets.models import ToolCall
from toolsets.turn import (
    PLUGIN_NAME,
    Answer,
    Audited,
    Call,
    Check,
    Offer,
    Result,
    Step,
    Turn,
    Turns,
    call_key,
)

logger = logging.getLogger(__name__)
# OpenTelemetry's API: a no-op until an SDK provider is installed
# (agents.observability); under ADK's execute_tool span of the call.
tracer = trace.get_tracer("toolcrib")

GOVERNANCE_SPAN = "toolcrib.governance"
ALLOWED = "allowed"
CUT_SHORT_SUMMARY = "Cut short: the turn was stopped while the call ran."


class GovernancePlugin(BasePlugin):
    """Per-step exposure, per-call enforcement and the audit of every tool call."""

    def __init__(self, name: str = PLUGIN_NAME, *, run: Run | None = None) -> None:
        super().__init__(name)
        self.turns = Turns()
        self._run = run

    @classmethod
    def for_run(cls, *, run: Run) -> Self:
        """The plugin of one turn: its audit rows name that turn's Run."""
        return cls(run=run)

    async def after_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> None:
        """Forget the invocation's turn."""
        self.turns.end(invocation_context.invocation_id)

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        """Forget the invocation's turn; ADK re-raises the error."""
        self.turns.end(invocation_context.invocation_id)

    async def close(self) -> None:
        """Forget every turn: a cancelled run reaches neither callback above."""
        self.turns.clear()

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Offer the model only what every check allows at this step."""
        turn = self.turns.start(callback_context.invocation_id)
        turn.model_calls += 1
        agent = callback_context.agent_name
        offer = turn.offers.get(agent)
        if offer is not None and offer.added:
            _append_added(llm_request, offer)
        if not llm_request.tools_dict:
            turn.steps[agent] = Step({}, offered=set(), inactive=set())
            return None
        if turn.model_calls == 1:
            turn.tool_choice = await afirst_call_choice(
                run=self._run, app_name=callback_context.session.app_name
            )
        step = turn.steps[agent] = await _step(callback_context, offer)
        for check in CHECKS:
            await check.offer(
                step=step, turn=turn, request=llm_request, context=callback_context
            )
        step.offered = set(llm_request.tools_dict)
        return None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict | None:
        """Answer a call the first refusing check refuses; the tool never runs."""
        if is_internal(tool.name, tool):
            return None
        turn = self.turns.start(tool_context.invocation_id)
        step = await _step_of(turn, tool_context, tool)
        call = Call(tool, tool_args, step, step.bindings.get(tool.name))
        turn.calls[call_key(tool_context, tool)] = call
        answered = _as_decided(call, tool_args, tool_context)
        if answered is not None:
            return answered
        with tracer.start_as_current_span(GOVERNANCE_SPAN) as span:
            check, answer = await _first_refusal(call, turn, tool_context)
            if span.is_recording():
                span.set_attributes(_governance_attributes(call, tool_context, check))
        if answer is None:
            call.watched = execution.install(tool)
            return None
        if answer.response.get("status") != "error":
            return answer.response
        # A refusal says which, as the audit does (denied, inactive, ...): the
        # timeline's call line shows it.
        return {execution.OUTCOME_KEY: answer.status, **answer.response}

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: Any,
    ) -> dict | None:
        """Audit the call with the status of what decided how it ended."""
        call = self._pop_call(tool_context, tool)
        if call is None:
            return None
        status, attempts = _outcome(call, tool_context, result)
        if status == ToolCall.Status.REJECTED:
            return None  # Its held row reads the decision (see the module's doc).
        summary = await self._audit(
            tool_context, tool_args, call, status, result, attempts
        )
        call_id = tool_context.function_call_id
        if status == ToolCall.Status.AWAITING_APPROVAL:
            return _node_approval(call, tool_context)
        if call_id:
            turn = self.turns.start(tool_context.invocation_id)
            turn.results[call_id] = Result(result, summary, call.started_at)
        if status == ToolCall.Status.OK:
            await remember_result(call, result)
        return None

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        """Audit what the model received for each call this event answers, when a
        callback after governance's changed the tool's result."""
        turn = self.turns.get(invocation_context.invocation_id)
        if turn is None or not turn.results or event.partial:
            return None
        for response in event.get_function_responses():
            result = turn.results.pop(response.id or "", None)
            received = dict(response.response or {})
            if result is None or received == as_received(result.raw):
                continue
            await record_received(
                audited=turn.audited,
                call_id=response.id,
                started_at=result.started_at,
                summary=summarize(received),
                raw_summary=result.summary,
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
        """Audit a call that raised (or timed out), and answer the model with the
        error as the call's result, so the turn goes on.

        The agent's own on_tool_error callbacks answer first (a plugin's answer
        would skip them). An agent listed in TOOLCRIB_TOOL_ERRORS_FAIL_TURN gets
        ADK's own handling instead: the error fails the turn. A cancelled call
        cannot be answered (ADK ignores the return).
        """
        call = self._pop_call(tool_context, tool)
        if call is None:
            return None
        status, summary = self._failed(error)
        attempts = call.attempts if call.watched else 1
        await self._audit(tool_context, tool_args, call, status, summary, attempts)
        if isinstance(error, asyncio.CancelledError):
            return None
        if execution.fails_turn(tool_context.session.app_name):
            return None
        answer = await _agent_error_answer(tool, tool_args, tool_context, error)
        if answer is not None:
            return answer
        return execution.error_result(tool.name, error, attempts)

    def _failed(self, error: BaseException) -> tuple[str, str]:
        """The audit status and summary of a call that raised, or was cancelled:
        by the turn timeout, or cut short by a person stopping the turn (its Run
        reads cancelled before the turn's task is: agents.turns.stops)."""
        if isinstance(error, asyncio.CancelledError) and self._is_stopped():
            return ToolCall.Status.CANCELLED, CUT_SHORT_SUMMARY
        timed_out = isinstance(error, (TimeoutError, asyncio.CancelledError))
        status = ToolCall.Status.TIMEOUT if timed_out else ToolCall.Status.ERROR
        return status, execution.describe(error)

    def _is_stopped(self) -> bool:
        return self._run is not None and self._run.status == Run.Status.CANCELLED

    def _pop_call(self, context: Context, tool: BaseTool) -> Call | None:
        turn = self.turns.get(context.invocation_id)
        return turn.calls.pop(call_key(context, tool), None) if turn else None

    async def _audit(
        self,
        context: Context,
        args: Mapping[str, Any],
        call: Call,
        status: str,
        result: Any,
        attempts: int,
    ) -> str:
        """Write the call's audit row; the summary of its result it wrote."""
        session = context.session
        turn = self.turns.start(context.invocation_id)
        if turn.audited is None:
            turn.audited = self._audited_run(session) or await audited_of(session)
        elapsed = timedelta(seconds=time.perf_counter() - call.started)
        summary = (
            _held_reason(context)
            if status == ToolCall.Status.AWAITING_APPROVAL
            else summarize(result)
        )
        decided_by, decided_at = (
            await held_decision(turn.audited.session_id, context.function_call_id)
            if call.approved and status != ToolCall.Status.AWAITING_APPROVAL
            else (None, None)
        )
        await record_call(
            user_id=django_user_id(context.user_id),
            session_id=turn.audited.session_id,
            run_id=turn.audited.run_id,
            invocation_id=context.invocation_id,
            agent=session.app_name,
            adk_agent=context.agent_name,
            call_id=context.function_call_id or "",
            tool_name=call.tool.name,
            tool_full_name=call.full_name,
            args=redact_secrets(dict(args)),
            asked_args=(
                None if call.asked_args is None else redact_secrets(call.asked_args)
            ),
            args_edited_by=call.edited_by,
            decided_by=decided_by,
            decided_at=decided_at,
            result_summary=summary,
            raw_result_summary="",
            status=status,
            access_rule=call.decision.rule if call.decision else "",
            started_at=call.started_at,
            finished_at=call.started_at + elapsed,
            duration_ms=round(elapsed.total_seconds() * 1000),
            attempts=attempts,
        )
        return summary

    def _audited_run(self, session: AdkSession) -> Audited | None:
        """This plugin's Run, when the call is in its session: no query needed."""
        run = self._run
        if run is None or not Run.session.is_cached(run):
            return None
        row = run.session
        if (row.app_name, row.user_id, row.adk_id) != (
            session.app_name,
            session.user_id,
            session.id,
        ):
            return None
        return Audited(session_id=row.pk, run_id=run.pk)


# What a person decided beyond yes or no.


def _as_decided(call: Call, args: dict[str, Any], context: Context) -> dict | None:
    """Apply an approver's answer: run with the arguments she changed the call to
    (in place: ADK hands the tool this very dict, and every check judges them), or
    answer with her text in the tool's place; nothing runs then, and the held
    call's audit row reads the decision (decisions.py)."""
    confirmation = context.tool_confirmation
    call.approved = confirmation is not None and confirmation.confirmed
    payload = confirmation.payload if confirmation is not None else None
    if not isinstance(payload, dict):
        return None
    changed = payload.get(ANSWER_ARGUMENTS)
    if confirmation.confirmed and isinstance(changed, dict):
        call.asked_args = dict(args)
        edited_by = payload.get(ANSWER_EDITED_BY)
        call.edited_by = edited_by if isinstance(edited_by, int) else None
        args.clear()
        args.update(changed)
        return None
    text = payload.get(ANSWER_RESPONSE)
    if not confirmation.confirmed and isinstance(text, str):
        call.answer = Answer(ToolCall.Status.REJECTED, {"result": text})
        return call.answer.response
    return None


def _node_approval(call: Call, context: Context) -> Any:
    """What a workflow's tool node held for approval yields instead of a result:
    its node's request for confirmation, which ADK's tool node hands on as it
    hands on a tool's own (agents.pauses.ask_node_approval). None for a call an
    agent's model made: ADK's own confirmation gate asks for that one."""
    if not bindings.is_tool_node_call(context):
        return None
    return ask_node_approval(context, tool=call.tool, args=call.args)


# The checks of one call, and their span.


async def _first_refusal(
    call: Call, turn: Turn, context: Context
) -> tuple[Check | None, Answer | None]:
    """The first check that answers the call, and its answer (kept on the call)."""
    for check in CHECKS:
        answer = await check.check(call=call, turn=turn, context=context)
        if answer is not None:
            call.answer = answer
            return check, answer
    return None, None


def _governance_attributes(
    call: Call, context: Context, check: Check | None
) -> dict[str, str]:
    """What the `toolcrib.governance` span says of a call: the tool, the decision
    (the refusing check's audit status, or allowed) and the rule that decided."""
    decision = str(call.answer.status) if call.answer else ALLOWED
    return {
        "toolcrib.tool": call.full_name or call.tool.name,
        "toolcrib.call_id": context.function_call_id or "",
        "toolcrib.decision": decision,
        "toolcrib.rule": call.decision.rule if call.decision else "",
        "toolcrib.check": type(check).__name__ if check else "",
    }


# The step's bindings.


async def _step(
    context: Context, offer: Offer | None = None, tool: BaseTool | None = None
) -> Step:
    """A step of the agent's bindings now, with the tools added in this turn; a
    tool no sync has seen is catalogued first, and an added one brought up to date;
    with access as of one reading of its versions and the session's activation."""
    keys = [activation.version_key(context.session)]
    agent = None if tool else context.get_invocation_context().agent
    found = await bindings.abindings_for_invocation(context, agent, tool)
    fresh: list[Binding] = []
    if offer is not None:
        found.update(offer.added)
        fresh = [offer.added[name] for name in offer.fresh]
        offer.fresh.clear()
    if fresh:
        # A sync sees only declared tools, and marks an added one missing.
        await sync_to_async(catalog.register)(fresh, refresh=True)
    # The user's grants in the same hop: the step's decisions then take none.
    user_id = django_user_id(context.user_id)
    snapshot = await access.asnapshot(keys=keys, user_id=user_id)
    new = [b for b in found.values() if b.full_name not in snapshot.tools]
    if new:
        await sync_to_async(catalog.register)(new)
        snapshot = await access.asnapshot(keys=keys, user_id=user_id)
    return Step(found, snapshot, agent)


def _append_added(llm_request: LlmRequest, offer: Offer) -> None:
    """Declare the tools added in this turn, as the agent's own are."""
    tools = [
        b.tool for name, b in offer.added.items() if name not in llm_request.tools_dict
    ]
    llm_request.append_tools(tools)


async def _step_of(turn: Turn, context: Context, tool: BaseTool) -> Step:
    """The agent's latest model step; for a call with none in this run (one ADK
    runs again once approved), a step of its own, resolved once. A workflow's
    tool node (no agent, no model) has a step of its own, by its node path."""
    if bindings.is_tool_node_call(context):
        key = f"node:{getattr(context, 'node_path', '')}"
        step = turn.steps.get(key)
        if step is None:
            step = turn.steps[key] = await _step(context, tool=tool)
        return step
    step = turn.steps.get(context.agent_name)
    if step is None:
        step = turn.steps[context.agent_name] = await _step(context)
    return step


# How a call ended.


def _outcome(call: Call, context: Context, result: Any) -> tuple[str, int]:
    """The audit status and the number of runs of a call that did not raise."""
    if call.answer is not None:
        return call.answer.status, 0
    ran = call.dispatched or not call.watched
    attempts = (call.attempts if call.watched else 1) if ran else 0
    held = _held(context)
    if held is not None:
        return held, attempts
    if not ran:
        # No check refused it, no person holds it: the agent's own
        # before_tool_callback answered it.
        return ToolCall.Status.REFUSED, 0
    if call.outcome:
        return call.outcome, attempts
    status = ToolCall.Status.ERROR if _is_error_result(result) else ToolCall.Status.OK
    return status, attempts


# A held call's audit row, in words (true before and after its decision): not
# ADK's placeholder result, which speaks to the model ("...please approve or reject.").
def _held_reason(context: Context) -> str:
    """A held call's summary: why it waits, in the words its request's card reads
    (agents.requests.wording), from the hint its confirmation was asked with."""
    asked = context.actions.requested_tool_confirmations.get(
        context.function_call_id or ""
    )
    return wording.approval_reason(asked.hint if asked is not None else "")


def _held(context: Context) -> str | None:
    """`awaiting_approval` for a call that asks a person (ADK's confirmation gate,
    or the tool itself), `rejected` for one a person refused (or nobody decided in
    time: ADK tells it as a rejection); None for any other call."""
    asked = context.actions.requested_tool_confirmations or {}
    if context.function_call_id in asked:
        return ToolCall.Status.AWAITING_APPROVAL
    confirmation = context.tool_confirmation
    if confirmation is not None and not confirmation.confirmed:
        return ToolCall.Status.REJECTED
    return None


async def _agent_error_answer(
    tool: BaseTool, args: dict[str, Any], context: Context, error: Exception
) -> dict | None:
    """What the agent's own on_tool_error callbacks answer, if one does."""
    agent = context.get_invocation_context().agent
    for callback in getattr(agent, "canonical_on_tool_error_callbacks", None) or []:
        answer = callback(tool=tool, args=args, tool_context=context, error=error)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer is not None:
            return answer
    return None


def _is_error_result(result: Any) -> bool:
    return isinstance(result, dict) and is_error_response(result)


# The audit record.
