"""Driving a turn: execute_turn() claims the Run (queue.py), drives ADK's Runner
(assembled by runner.py: the agent tree, the Django services, the plugins of
TOOLCRIB_PLUGINS), records each event's requests, publishes it, ends the Run.

Inline and Celery executions share execute_turn(). Persist first, publish second:
every non-partial event is stored by DjangoSessionService (with its seq) before it
is yielded here and published.
"""

import asyncio
import logging
from functools import partial
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from google.adk.events import Event as AdkEvent
from google.genai import types

from agents.adk import providers
from agents.adk.builder import AgentBuildError
from agents.doorbell import streams
from agents.events.log import apublish_row, record
from agents.events.wire import (
    EventFrame,
    Handoff,
    escalation_of,
    frame_text,
    run_out,
    transfer_of,
    wire_from_adk,
)
from agents.metrics import observe_run
from agents.model_grants import ModelNotGranted
from agents.model_picks import ModelNotOffered
from agents.models import Event, Request, Run
from agents.observability.spans import TurnTrace, publishing
from agents.redaction import turn_secrets
from agents.requests.record import arecord_requests
from agents.turns import queue, runner, stops
from agents.turns.orm_threads import turn_thread
from agents.usage import (
    BudgetExceeded,
    cost_of,
    count_ended_run,
    count_late_tokens,
)
from project.patches.prepared import Param, Prepared, PreparedUpdate

logger = logging.getLogger(__name__)


class TurnError(Exception):
    """A turn could not run; the message is what the user reads."""

    def __init__(self, message: str, *, code: str = "TURN_ERROR") -> None:
        super().__init__(message)
        self.code = code


async def execute_turn(run_id) -> None:
    """Run one queued turn to its end: succeeded, waiting for a person, failed
    with a readable error, or stopped (cancelled: agents.turns.cancel).

    The turn gets its own thread for the ORM (as Django gives each request one), so
    a caller blocked waiting for this turn can never starve it (orm_threads.py),
    and that thread closes its connection when the turn gives it back.
    """
    async with turn_thread():
        await _execute_turn(run_id)


def _run_param(name: str) -> Param:
    return Param(name, Run._meta.get_field(name))


# The Run's invocation id, set by its first event.
SET_INVOCATION = PreparedUpdate(
    Run.objects.filter(pk=_run_param("id")),
    {"invocation_id": _run_param("invocation_id")},
)
# The turn's model and counts, stored with its end (run_out's stats).
STATS = ("model", "model_calls", "tool_calls")
# How a turn ended, stored over a running Run only; its model and counts with it.
ENDING = [
    "status",
    "waiting_for",
    "finished_at",
    "error",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cost_micros",
    *STATS,
]
SAVE_END = PreparedUpdate(
    Run.objects.filter(pk=_run_param("id"), status=Run.Status.RUNNING),
    {name: _run_param(name) for name in ENDING},
)


# The Run and what a turn reads with it, in one query compiled once a process.
TURN_RUN = Prepared(
    Run.objects.select_related("session__agent", "session__owner", "user").filter(
        pk=_run_param("id")
    )
)


class _Start:
    """How far a turn's start got: what a failure there must undo."""

    def __init__(self) -> None:
        self.run: Run | None = None
        self.claimed = False
        self.held = False


def _load_and_claim(run_id, start: _Start) -> tuple[Run, Event | None]:
    """The Run (TURN_RUN), claimed if it heads its session's queue, and then its
    run_started event stored (else None): one thread hop for all, as a turn starts."""
    run = start.run = TURN_RUN.first(id=run_id)
    if run is None:
        raise Run.DoesNotExist(f"no run {run_id}")
    if not queue.claim_if_first(run):
        return run, None
    start.claimed = True
    return run, _started(run)


def _started(run: Run) -> Event:
    """Store the claimed turn's run_started event (published by _run_claimed)."""
    return record(
        session=run.session,
        kind="run_started",
        invocation_id=run.invocation_id,
        data={"run": run_out(run)},
    )


async def _execute_turn(run_id) -> None:
    start = _Start()
    try:
        run, started = await _start(run_id, start)
    except Run.DoesNotExist:
        logger.info("turn skipped run=%s: no such run (deleted)", run_id)
        return
    except Exception as exc:  # noqa: BLE001 - the Run must not wait forever
        logger.exception("turn could not start run=%s", run_id)
        await _fail_start(run_id, start, exc)
        return
    if started is None:
        logger.info("turn skipped run=%s status=%s", run.id, run.status)
        # Delivered again: the turn runs (or ran) elsewhere; fail it if that died.
        await queue.await_run_end(run.id)
        return
    try:
        turn = TurnTrace(run)
    except Exception as exc:  # noqa: BLE001 - the Run must not wait forever
        logger.exception("turn could not start run=%s", run.id)
        await _fail_start(run.id, start, exc)
        return
    try:
        # The turn's secret values, noted as it meets them, masked in the text
        # its spans, logs and audit send out (agents.adk.secret_values).
        with turn_secrets(), turn.active():
            await _run_claimed(run, turn, started)
    finally:
        await queue.arelease_lease(run.id)
        # Also for a failed, cancelled or waiting turn: its spans are its story.
        await turn.asave()


async def _start(run_id, start: _Start) -> tuple[Run, Event | None]:
    """Load the Run and claim it once it heads its session's queue; its
    run_started event stored. None instead of the event: the Run is not this
    delivery's to run (another claimed it, or it has ended).

    A queued run's lease is held from the moment it is read, so no sweep takes it
    for lost while it waits for the session's earlier turns (agents.turns.sweep).
    """
    run, started = await sync_to_async(_load_and_claim)(run_id, start)
    if started is not None:
        await queue.ahold_lease(run.id)
        start.held = True
        return run, started
    if run.status != Run.Status.QUEUED:
        return run, None
    await queue.ahold_lease(run.id)
    start.held = True
    try:
        if not await queue.aclaim(run, tried_first=True):
            await queue.arelease_lease(run.id)
            start.held = False
            return run, None
        start.claimed = True
        return run, await sync_to_async(_started)(run)
    except BaseException:
        if not start.claimed:
            await queue.arelease_lease(run.id)
            start.held = False
        raise


async def _fail_start(run_id, start: _Start, exc: Exception) -> None:
    """End a Run whose turn could not start (its claim, or its run_started event,
    raised): failed, with an error event a person can read, so the session's next
    turn may run. If even that fails (the database away), the Run stays as it was
    and agents.turns.sweep ends it, or runs it again, once no lease is held."""
    code, message = _failure(exc)
    message = f"The turn could not start: {message}"
    was = Run.Status.RUNNING if start.claimed else Run.Status.QUEUED
    try:
        await queue.aend_failed(run_id, was=was, code=code, message=message)
    finally:
        if start.held:
            await queue.arelease_lease(run_id)


async def _run_claimed(run: Run, turn: TurnTrace, started: Event) -> None:
    """Drive a claimed turn and end its Run, however the turn ends."""
    try:
        async with asyncio.timeout(settings.TOOLCRIB_TURN_TIMEOUT):
            # A stop cancels the turn where it is; who stopped it ended the Run.
            async with stops.watching(run):
                await apublish_row(run.session, started)
                paused = await _drive(run)
    except stops.TurnStopped:
        logger.info("turn stopped run=%s", run.id)
        run.status = Run.Status.CANCELLED  # as stored by who stopped it
        observe_run(run, status=Run.Status.CANCELLED)
        # Who stopped it ended the Run; the tokens it used so far are this turn's.
        await _save_tokens(run)
    except TimeoutError:
        await _fail(
            run,
            turn,
            "TIMEOUT",
            "The turn took longer than the turn timeout and was stopped.",
        )
    except (
        providers.ModelNotConfigured,
        BudgetExceeded,
        ModelNotGranted,
        ModelNotOffered,
    ) as exc:
        logger.info("turn refused run=%s code=%s", run.id, exc.code)
        await _fail(run, turn, exc.code, str(exc))
    except AgentBuildError as exc:
        # Staff read why on the Agents page; the error names code, so users do not.
        logger.error("turn refused run=%s error=%s", run.id, exc)
        await _fail(run, turn, exc.code, exc.public_message)
    except Exception as exc:  # noqa: BLE001 - any failure must end the Run readably
        logger.exception("turn failed run=%s", run.id)
        await _fail(run, turn, *_failure(exc))
    else:
        waiting_for = await _waiting_for(run) if paused else ""
        await _finish(run, turn, waiting_for=waiting_for)


async def _drive(run: Run) -> bool:
    """Drive the Runner through the turn; True if the turn paused for a person."""
    assembled = await runner.assemble(run, on_stored=partial(_note_invocation, run))
    last_error: AdkEvent | None = None
    paused = False
    try:
        async for event in assembled.runner.run_async(
            user_id=run.session.user_id,
            session_id=run.session.adk_id,
            new_message=assembled.message,
            run_config=assembled.config,
            yield_user_message=True,
        ):
            paused = await _on_event(run, assembled, event) or paused
            if event.partial:
                continue
            if event.error_code:
                last_error = event
            elif last_error is not None and retried(last_error, event):
                last_error = None  # ADK ran the node again, and it went on
    finally:
        await assembled.runner.close()
    if last_error is not None:
        raise TurnError(
            last_error.error_message or str(last_error.error_code),
            code=str(last_error.error_code),
        )
    return paused


def retried(error: AdkEvent, later: AdkEvent) -> bool:
    """Whether a later event shows that ADK recovered from an error event: a
    workflow node's next attempt (its RetryConfig) went on at the same node path.
    The failed attempt's error event stays in the timeline; the turn does not fail
    for it."""
    path = error.node_info.path if error.node_info else None
    return bool(path) and later.node_info is not None and later.node_info.path == path


async def _on_event(run: Run, assembled: runner.Assembled, event: AdkEvent) -> bool:
    """Store what the event changes of the Run, record its requests, publish it;
    True if it paused for a person."""
    if event.invocation_id and not run.invocation_id:  # a partial event came first
        await sync_to_async(_note_invocation)(run, event)
    if event.usage_metadata and not event.partial:
        _add_usage(run, event.usage_metadata)
    if not event.partial and event.content and event.content.role == "model":
        run.model_calls += 1
        run.tool_calls += len(event.get_function_calls())
    if event.usage_metadata and not event.partial and assembled.budgeted:
        # Stored as it comes, so budgets see a running turn's tokens too.
        await Run.objects.filter(pk=run.pk).aupdate(
            prompt_tokens=run.prompt_tokens,
            completion_tokens=run.completion_tokens,
            total_tokens=run.total_tokens,
        )
    # Recorded before the event is published: a client that sees a pending request
    # may answer it at once.
    requests = await arecord_requests(run, event, assembled.root)
    await _record_handoffs(run, event)
    seq = None if event.partial else assembled.service.seq_of(event.id)
    sender = runner.turn_sender(run) if event.author == "user" else None
    wire = wire_from_adk(event, sender=sender)
    frame = EventFrame(seq=seq, session=run.session_id, event=wire)
    with publishing(seq=seq, partial=bool(event.partial)):
        await streams.apublish_frame(
            run.session, frame_text(frame), seq=seq, kind=wire.kind
        )
    return bool(requests)


def _note_invocation(run: Run, event: AdkEvent) -> None:
    """Store the Run's invocation id, that of its first event: called in the thread
    hop that stored the event (DjangoSessionService's on_stored), so it costs none
    of its own."""
    if event.invocation_id and not run.invocation_id:
        SET_INVOCATION.run(id=run.pk, invocation_id=event.invocation_id)
        run.invocation_id = event.invocation_id


async def _record_handoffs(run: Run, event: AdkEvent) -> None:
    """Note each transfer and escalation on the Run: from, to, why, which event."""
    if event.partial:
        return
    found: list[tuple[str, Handoff | None]] = [
        ("transfer", transfer_of(event)),
        ("escalation", escalation_of(event)),
    ]
    handoffs = [
        {
            "kind": kind,
            "from": handoff.from_agent,
            "to": handoff.to_agent,
            "reason": handoff.reason,
            "event_id": event.id,
        }
        for kind, handoff in found
        if handoff is not None
    ]
    if handoffs:
        run.handoffs = [*run.handoffs, *handoffs]
        await Run.objects.filter(pk=run.pk).aupdate(handoffs=run.handoffs)


def _failure(exc: Exception) -> tuple[str, str]:
    """The error code and message a user reads for a failed turn."""
    described = providers.describe_model_error(exc)
    if described is not None:
        return described
    code = getattr(exc, "code", None)
    if not isinstance(code, str):
        code = type(exc).__name__
    return code, str(exc) or type(exc).__name__


def _add_usage(run: Run, usage: types.GenerateContentResponseUsageMetadata) -> None:
    run.prompt_tokens += usage.prompt_token_count or 0
    run.completion_tokens += usage.candidates_token_count or 0
    run.total_tokens += usage.total_token_count or 0


# What a run waits for when requests of more than one kind are pending: the first.
WAITS_FOR = {
    Request.Kind.APPROVAL: Run.WaitingFor.APPROVAL,
    Request.Kind.CREDENTIAL: Run.WaitingFor.CREDENTIAL,
    Request.Kind.CALL: Run.WaitingFor.RESULT,
}


async def _waiting_for(run: Run) -> str:
    """What the turn waits for: its own requests still pending; "" if none is.

    Asked only of a turn that recorded a request: one answered before the turn
    ended (a result posted at once) leaves nothing to wait for.
    """
    pending = Request.objects.filter(run=run, status=Request.Status.PENDING)
    kinds = {kind async for kind in pending.values_list("kind", flat=True)}
    return next((why for kind, why in WAITS_FOR.items() if kind in kinds), "")


async def _finish(run: Run, turn: TurnTrace, *, waiting_for: str) -> None:
    """End the turn: waiting for a person while its requests are pending, else
    succeeded."""
    run.status = Run.Status.WAITING if waiting_for else Run.Status.SUCCEEDED
    run.waiting_for, run.finished_at = waiting_for, timezone.now()
    turn.end()
    await _end(run, turn, [("run_finished", {"run": run_out(run)})])


async def _fail(run: Run, turn: TurnTrace, code: str, message: str) -> None:
    run.status, run.finished_at, run.error = Run.Status.FAILED, timezone.now(), message
    turn.end()
    error = {"error": {"code": code, "message": message}, "run": run_out(run)}
    await _end(run, turn, [("error", error), ("run_finished", {"run": run_out(run)})])


@sync_to_async
def _save_tokens(run: Run) -> None:
    """Store the tokens the turn has counted (written as they come only under a
    budget, else with the turn's end), and add those usage has not counted yet."""
    run.cost_micros = cost_of(run)
    with transaction.atomic():
        count_late_tokens(run)  # before the UPDATE: what it adds to the stored
        Run.objects.filter(pk=run.pk).update(
            prompt_tokens=run.prompt_tokens,
            completion_tokens=run.completion_tokens,
            total_tokens=run.total_tokens,
            cost_micros=run.cost_micros,
            **_stats(run),
        )


async def _end(run: Run, turn: TurnTrace, told: list[tuple[str, dict]]) -> None:
    """Store the turn's spans, how it ended and the events that tell it (`told`:
    kind and data, in order), in one thread hop, then publish those events. The
    spans first, so a trace read on run_finished is whole. Nothing is stored or
    told when the Run had already been ended elsewhere, e.g. failed by queue.py
    because its lease ran out while this process was stalled: the first ending
    stands, and is told only once."""
    rows = await sync_to_async(_store_end)(run, turn, told)
    if rows is None:
        logger.warning("turn ended after its Run was ended elsewhere run=%s", run.pk)
        return
    observe_run(run)
    for row in rows:
        await apublish_row(run.session, row)


def _store_end(
    run: Run, turn: TurnTrace, told: list[tuple[str, dict]]
) -> list[Event] | None:
    """The spans, the Run's end, its usage totals and the events that tell it, in
    one transaction: a Run never reads ended without its run_finished, usage counts
    it as it ends, and the turn's end waits for one commit, not one per statement."""
    run.cost_micros = cost_of(run)  # at its model's prices as it ends
    with transaction.atomic():
        turn.save()
        ending = {name: getattr(run, name) for name in ENDING}
        if not SAVE_END.run(id=run.pk, **ending):
            return None
        count_ended_run(run)
        return [
            record(
                session=run.session,
                kind=kind,
                invocation_id=run.invocation_id,
                data=data,
            )
            for kind, data in told
        ]


def _stats(run: Run) -> dict[str, Any]:
    """The turn's STATS, by name."""
    return {name: getattr(run, name) for name in STATS}
