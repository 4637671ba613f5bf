"""Turns: start_turn() records a Run; execute_turn() drives ADK's Runner, persists, publishes.

Inline and Celery executions share execute_turn(). Persist first, publish second:
every non-partial event is stored by DjangoSessionService (with its seq) before it
is yielded here and published.
"""

import asyncio
import logging
import time
from datetime import timedelta
from typing import Any

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from google.adk.agents.run_config import RunConfig, StreamingMode, ToolThreadPoolConfig
from google.adk.apps import App
from google.adk.events import Event as AdkEvent
from google.adk.runners import Runner
from google.genai import types

from agents import executors, streams
from agents.adk.builder import agent_for
from agents.adk.sessions import DjangoSessionService, record_event
from agents.events import EventFrame, RunOut, frame_from_row, frame_json, wire_from_adk
from agents.models import Run, Session

logger = logging.getLogger(__name__)

POLL_START = 0.02
POLL_MAX = 0.5


class TurnError(Exception):
    """A turn could not run; the message is what the user reads."""


def start_turn(*, session: Session, user, text: str) -> Run:
    """Record a queued Run for a user message and hand it to the executor."""
    with transaction.atomic():
        run = Run.objects.create(session=session, user=user, text=text)
        executors.submit(run_id=run.id)
    return run


def wait_for_run(*, run: Run, timeout: float) -> Run:
    """Block until the run has ended (or the timeout passes); return it fresh."""
    executors.wait(run_id=run.id, timeout=timeout)
    run.refresh_from_db()
    return run


async def execute_turn(run_id) -> None:
    """Run one queued turn to its end: succeeded, or failed with a readable error.

    The turn gets its own thread for the ORM (as Django gives each request one), so
    a caller blocked waiting for this turn can never starve it.
    """
    async with ThreadSensitiveContext():
        try:
            await _execute_turn(run_id)
        finally:
            await sync_to_async(_close_connection)()


def _close_connection() -> None:
    # The turn's ORM thread ends with the turn; its connection must not outlive it.
    connection.close()


async def _execute_turn(run_id) -> None:
    run = await Run.objects.select_related("session__agent", "session__owner").aget(
        pk=run_id
    )
    if not await _acquire_turn(run):
        logger.info("turn skipped run=%s status=%s", run.id, run.status)
        return
    await _record(run, "run_started", {"run": _run_out(run)})
    try:
        async with asyncio.timeout(settings.TOOLCRIB_TURN_TIMEOUT):
            await _drive(run)
    except TimeoutError:
        await _fail(
            run,
            "TIMEOUT",
            "The turn took longer than the turn timeout and was stopped.",
        )
    except Exception as exc:  # noqa: BLE001 - any failure must end the Run readably
        logger.exception("turn failed run=%s", run.id)
        await _fail(run, type(exc).__name__, str(exc) or type(exc).__name__)
    else:
        await _finish(run)


async def _acquire_turn(run: Run) -> bool:
    """Wait until every earlier run of the session has ended, then claim this one.

    One turn at a time per session across processes: the Run rows are the queue,
    and the conditional UPDATE is the claim, so a redelivered run never runs twice.
    """
    delay = POLL_START
    while True:
        head = await _queue_head(run.session_id)
        if head is None or head.pk != run.pk:
            if not await Run.objects.filter(
                pk=run.pk, status=Run.Status.QUEUED
            ).aexists():
                return False
            await asyncio.sleep(delay)
            delay = min(delay * 2, POLL_MAX)
            continue
        now = timezone.now()
        claimed = await Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED).aupdate(
            status=Run.Status.RUNNING, started_at=now
        )
        run.status, run.started_at = Run.Status.RUNNING, now
        return bool(claimed)


async def _queue_head(session_id: str) -> Run | None:
    """The oldest unfinished run of a session, after failing runs that died silently."""
    stale = timezone.now() - timedelta(seconds=settings.TOOLCRIB_TURN_TIMEOUT * 2)
    await Run.objects.filter(
        session_id=session_id, status=Run.Status.RUNNING, started_at__lt=stale
    ).aupdate(
        status=Run.Status.FAILED,
        finished_at=timezone.now(),
        error="The worker running this turn stopped answering.",
    )
    return (
        await Run.objects.filter(
            session_id=session_id, status__in=[Run.Status.QUEUED, Run.Status.RUNNING]
        )
        .order_by("created_at", "id")
        .afirst()
    )


async def _drive(run: Run) -> None:
    session = run.session
    service = DjangoSessionService()
    app = App(name=session.app_name, root_agent=await _agent_of(session), plugins=[])
    runner = Runner(app=app, session_service=service)
    config = RunConfig(
        streaming_mode=StreamingMode.SSE,
        tool_thread_pool_config=ToolThreadPoolConfig(
            max_workers=settings.TOOLCRIB_TOOL_THREADS
        ),
    )
    message = types.Content(role="user", parts=[types.Part(text=run.text)])
    last_error: AdkEvent | None = None
    try:
        async for event in runner.run_async(
            user_id=session.user_id,
            session_id=session.id,
            new_message=message,
            run_config=config,
            yield_user_message=True,
        ):
            await _on_event(run, service, event)
            if event.error_code and not event.partial:
                last_error = event
    finally:
        await runner.close()
    if last_error is not None:
        raise TurnError(
            f"{last_error.error_code}: {last_error.error_message or ''}".strip()
        )


async def _agent_of(session: Session):
    return await sync_to_async(agent_for)(session.agent)


async def _on_event(run: Run, service: DjangoSessionService, event: AdkEvent) -> None:
    if event.invocation_id and not run.invocation_id:
        run.invocation_id = event.invocation_id
        await Run.objects.filter(pk=run.pk).aupdate(invocation_id=event.invocation_id)
    if event.usage_metadata and not event.partial:
        _add_usage(run, event.usage_metadata)
    seq = None if event.partial else service.seq_of(event.id)
    frame = EventFrame(seq=seq, session=run.session_id, event=wire_from_adk(event))
    await _publish(run, frame_json(frame))


def _add_usage(run: Run, usage: types.GenerateContentResponseUsageMetadata) -> None:
    run.prompt_tokens += usage.prompt_token_count or 0
    run.completion_tokens += usage.candidates_token_count or 0
    run.total_tokens += usage.total_token_count or 0


async def _finish(run: Run) -> None:
    run.status, run.finished_at = Run.Status.SUCCEEDED, timezone.now()
    await _save_end(run)
    await _record(run, "run_finished", {"run": _run_out(run)})


async def _fail(run: Run, code: str, message: str) -> None:
    run.status, run.finished_at, run.error = Run.Status.FAILED, timezone.now(), message
    await _save_end(run)
    await _record(
        run,
        "error",
        {"error": {"code": code, "message": message}, "run": _run_out(run)},
    )
    await _record(run, "run_finished", {"run": _run_out(run)})


async def _save_end(run: Run) -> None:
    await Run.objects.filter(pk=run.pk).aupdate(
        status=run.status,
        finished_at=run.finished_at,
        error=run.error,
        prompt_tokens=run.prompt_tokens,
        completion_tokens=run.completion_tokens,
        total_tokens=run.total_tokens,
    )


def _run_out(run: Run) -> dict[str, Any]:
    return RunOut(
        id=str(run.id), status=run.status, error=run.error or None
    ).model_dump()


async def _record(run: Run, kind: str, data: dict[str, Any]) -> None:
    row = await record_event(
        session_id=run.session_id,
        kind=kind,
        author="system",
        invocation_id=run.invocation_id,
        data=data,
        timestamp=time.time(),
    )
    row.session = run.session
    await _publish(run, frame_json(frame_from_row(row)))


async def _publish(run: Run, frame: dict[str, Any]) -> None:
    session = run.session
    await streams.apublish(
        session_id=session.id,
        agent_name=session.app_name,
        owner_id=session.owner_id,
        frame=frame,
    )
