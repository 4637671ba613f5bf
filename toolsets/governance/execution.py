"""Running one governed call: its run under its policy's concurrency slot, deadline
and retries (toolsets.policies), and what the run tells the audit.

How the run is wrapped: ADK 2.13 runs a tool as `await tool.run_async(args=...,
tool_context=...)` after the before-tool callbacks and the confirmation gate
(flows/llm_flows/tools/_caller.py). Answering from a plugin's
`before_tool_callback` would skip that gate (human approval) and the agent's own
callbacks, so `install` instead puts a wrapper on the tool instance's
`run_async`, the first time GovernancePlugin lets a call of it through. The
wrapper finds that call in its turn (turn.turn_of, by function call id), notes
that it ran, and applies the policy's limits; for any other call it is a plain
pass-through. ADK still handles everything around it: the confirmation gate,
after-tool callbacks, and a non-retryable error going to on_tool_error callbacks
as before. A call that never reaches the wrapper did not run: the audit tells
the confirmation gate's pause, or the agent's own callback's answer, from a run.

- Timeout bounds the whole call (waiting for a slot, every attempt, the waits
  between them). An async tool is cancelled; a sync tool runs on ADK's tool
  thread (RunConfig.tool_thread_pool_config), where Python cannot stop it: its
  result is abandoned. Either way the model reads that it timed out.
- Retries: only errors marked retryable (policies.Retryable, policies.retryable,
  or a type in the policy's retry_on); the wait grows from `backoff` by
  `multiplier` up to `backoff_max`, and no wait starts that would pass the
  deadline. When retries run out the model reads the last error and the turn
  goes on.
- An error that is not retried reaches ADK's on_tool_error callbacks: the model
  reads it as the call's result (`error_result`) and the turn goes on, unless
  the agent chose to fail its turns on tool errors (`fails_turn`).
- Concurrency: slots are keys in Django's cache (`add` is atomic, Redis in
  production), so the limit holds across workers. A call waits up to
  `queue_wait` seconds for a slot, then is refused as busy. A slot is a lease
  (the timeout plus SLOT_GRACE, else SLOT_LEASE_SECONDS): one held by a worker
  that died frees itself. An abandoned sync call no longer holds its slot.
"""

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from google.adk.agents.context import Context
from google.adk.tools import BaseTool
from opentelemetry import trace

from toolsets.models import ToolCall
from toolsets.turn import Call, call_key, turn_of

logger = logging.getLogger(__name__)
tracer = trace.get_tracer("toolcrib")  # a no-op until an SDK provider is installed

EXECUTE_SPAN = "toolcrib.tool.execute"

WRAPPED_ATTR = "toolcrib_policed"
SLOT_KEY = "toolsets:slot"
SLOT_POLL_SECONDS = 0.05
SLOT_LEASE_SECONDS = 300  # without a timeout
SLOT_GRACE = 30  # with one: the timeout plus this
OUTCOME_KEY = "outcome"


def refusal(message: str, outcome: str, **extra: Any) -> dict[str, Any]:
    """What the model reads when a call did not run."""
    return {
        "status": "error",
        "error_message": message,
        OUTCOME_KEY: str(outcome),
        **extra,
    }


def error_result(tool_name: str, error: BaseException, attempts: int) -> dict:
    """What the model reads of a call that raised: the error as its result."""
    result: dict[str, Any] = {"error": f"{tool_name} failed: {describe(error)}"}
    if attempts > 1:
        result["attempts"] = attempts
    return result


def describe(error: BaseException) -> str:
    """An error as the audit and the model read it: `ValueError: bad input`."""
    return f"{type(error).__name__}: {error}"


def fails_turn(agent: str) -> bool:
    """Whether a tool that raises fails this agent's turn, rather than answering
    the model with the error (settings.TOOLCRIB_TOOL_ERRORS_FAIL_TURN)."""
    return agent in settings.TOOLCRIB_TOOL_ERRORS_FAIL_TURN


# Concurrency slots (in Django's cache, so shared by every worker on Redis).


async def acquire_slot(
    full_name: str, size: int, wait: float, lease: float = SLOT_LEASE_SECONDS
) -> str | None:
    """Take one of `size` slots of a tool, waiting up to `wait` seconds; its key.

    The slot is a lease of `lease` seconds: one whose holder died frees itself.
    """
    token = uuid.uuid4().hex
    deadline = time.monotonic() + wait
    while True:
        for index in range(size):
            key = f"{SLOT_KEY}:{full_name}:{index}"
            if await cache.aadd(key, token, timeout=lease):
                return f"{key}#{token}"
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(min(SLOT_POLL_SECONDS, max(deadline - time.monotonic(), 0)))


async def release_slot(slot: str) -> None:
    key, token = slot.rsplit("#", 1)
    if await cache.aget(key) == token:
        await cache.adelete(key)


# Running a call under its policy.


def install(tool: BaseTool) -> bool:
    """Route this tool instance's run_async through `_execute` (once per instance).

    False when the instance takes no wrapper: its calls then run without a timeout,
    retries or a slot, and the audit cannot see whether they ran.
    """
    if getattr(tool.run_async, WRAPPED_ATTR, False):
        return True
    plain = tool.run_async

    async def run_async(*, args: dict[str, Any], tool_context: Context) -> Any:
        turn = turn_of(tool_context)
        call = turn.calls.get(call_key(tool_context, tool)) if turn else None
        if call is None:
            return await plain(args=args, tool_context=tool_context)
        owner = call.tool  # the instance ADK dispatched, even if this one was copied
        return await _execute(
            call,
            lambda: type(owner).run_async(owner, args=args, tool_context=tool_context),
        )

    setattr(run_async, WRAPPED_ATTR, True)
    try:
        tool.run_async = run_async
    except (AttributeError, ValueError):  # __slots__, a pydantic tool
        logger.warning("cannot apply timeout/retries to tool %s", tool.name)
        return False
    return True


async def _execute(call: Call, run: Callable[[], Awaitable[Any]]) -> Any:
    """Run under the policy, in a `toolcrib.tool.execute` span (under ADK's
    execute_tool span) saying how the run ended, its attempts and its timeout."""
    with tracer.start_as_current_span(EXECUTE_SPAN) as span:
        outcome = ToolCall.Status.ERROR
        try:
            result = await _run_policed(call, run)
            outcome = call.outcome or ToolCall.Status.OK
            return result
        finally:
            if span.is_recording():
                span.set_attributes(_execute_attributes(call, outcome))


def _execute_attributes(call: Call, outcome: str) -> dict[str, Any]:
    policy = call.policy
    timeout = policy.timeout if policy is not None and policy.timeout else 0
    return {
        "toolcrib.tool": call.full_name or call.tool.name,
        "toolcrib.outcome": str(outcome),
        "toolcrib.attempts": call.attempts,
        "toolcrib.timeout": float(timeout),
    }


async def _run_policed(call: Call, run: Callable[[], Awaitable[Any]]) -> Any:
    """Run with a concurrency slot, a deadline and retries, as the policy says."""
    call.dispatched = True
    policy = call.policy
    if policy is None or not policy.controls_execution:
        call.attempts = 1
        return await run()
    started = time.monotonic()
    deadline = started + policy.timeout if policy.timeout else None
    slot = None
    if policy.max_concurrent:
        wait = policy.queue_wait
        if deadline is not None:
            wait = min(wait, policy.timeout)
        # A call cannot outlive its timeout, so its lease need not either.
        lease = policy.timeout + SLOT_GRACE if policy.timeout else SLOT_LEASE_SECONDS
        slot = await acquire_slot(call.full_name, policy.max_concurrent, wait, lease)
        if slot is None:
            call.outcome = ToolCall.Status.BUSY
            return refusal(
                f"{call.tool.name} is busy: {policy.max_concurrent} calls are "
                "running already. Try again later.",
                ToolCall.Status.BUSY,
            )
    try:
        return await _attempts(call, run, deadline)
    finally:
        if slot is not None:
            await release_slot(slot)


async def _attempts(
    call: Call, run: Callable[[], Awaitable[Any]], deadline: float | None
) -> Any:
    policy = call.policy
    while True:
        call.attempts += 1
        try:
            result = await _within(run, deadline)
        except DeadlineExceeded:
            call.outcome = ToolCall.Status.TIMEOUT
            return refusal(
                f"{call.tool.name} timed out: no answer within {policy.timeout:g} "
                "seconds. Its result, if any, is discarded.",
                ToolCall.Status.TIMEOUT,
                attempts=call.attempts,
            )
        except Exception as error:
            if not policy.is_retryable(error):
                raise  # ADK's on_tool_error callbacks, as without a policy
            pause = policy.delay(call.attempts)
            late = deadline is not None and time.monotonic() + pause >= deadline
            if call.attempts > policy.retries or late:
                return _gave_up(call, error)
            logger.info(
                "retrying tool=%s attempt=%s after=%s",
                call.full_name,
                call.attempts,
                pause,
            )
            await asyncio.sleep(pause)
            continue
        return _with_attempts(result, call.attempts)


class DeadlineExceeded(Exception):
    """The policy's timeout ran out (a TimeoutError the tool raises is its own)."""


async def _within(run: Callable[[], Awaitable[Any]], deadline: float | None) -> Any:
    if deadline is None:
        return await run()
    try:
        return await asyncio.wait_for(run(), max(deadline - time.monotonic(), 0))
    except TimeoutError as error:
        if time.monotonic() < deadline:
            raise
        raise DeadlineExceeded() from error


def _gave_up(call: Call, error: BaseException) -> dict[str, Any]:
    call.outcome = ToolCall.Status.ERROR
    return {
        "status": "error",
        "error_message": f"{call.tool.name} failed after {call.attempts} attempts: "
        f"{type(error).__name__}: {error}",
        "attempts": call.attempts,
    }


def _with_attempts(result: Any, attempts: int) -> Any:
    """Show a retried success as such: the model and the stream see `attempts`."""
    if attempts < 2:
        return result
    if isinstance(result, dict):
        return {**result, "attempts": attempts}
    return {"result": result, "attempts": attempts}
